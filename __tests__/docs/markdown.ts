/**
 * Reading the project's Markdown for the docs tests: which files, their fenced code blocks (with the
 * line they start on and the marker comment above them), their relative links and their headings'
 * anchors as GitHub computes them.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');

/** README.md, every docs/*.md, bench/README.md and the repository's own guides (CONTRIBUTING, SECURITY...). */
export function markdownFiles(): string[] {
  const top = ['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'SECURITY.md', 'bench/README.md'];
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  const examples = readdirSync(join(ROOT, 'examples'))
    .map((name) => `examples/${name}/README.md`)
    .filter((path) => existsSync(join(ROOT, path)));
  return [...top.filter((path) => existsSync(join(ROOT, path))), ...docs, ...examples];
}

export interface CodeBlock {
  readonly file: string;
  /** 1-based line of the block's first code line. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** The `<!-- snippet: ... -->` marker on the line above the fence, if any (`skip`, `standalone`). */
  readonly marker?: string;
}

const FENCE = /^(\s*)(```+|~~~+)\s*([\w+-]*)/;
const MARKER = /^<!--\s*snippet:\s*([\w-]+).*-->\s*$/;

export function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const fence = open[2];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j].trimStart().startsWith(fence); j++) body.push(lines[j]);
    const marker = i > 0 ? MARKER.exec(lines[i - 1].trim())?.[1] : undefined;
    blocks.push({ file, line: i + 2, lang: open[3].toLowerCase(), code: body.join('\n'), marker });
    i = j;
  }
  return blocks;
}

/** The text of `file` with fenced blocks and inline code blanked out (line count kept), for link and heading scans. */
export function prose(file: string): string[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  let fence: string | undefined;
  return lines.map((line) => {
    const open = FENCE.exec(line);
    if (fence) {
      if (line.trimStart().startsWith(fence)) fence = undefined;
      return '';
    }
    if (open) {
      fence = open[2];
      return '';
    }
    return line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
  });
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor of a Markdown file (a repeated heading gets -1, -2, ...). */
export function anchors(file: string): Set<string> {
  const raw = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const found = new Set<string>();
  const counts = new Map<string, number>();
  let fence: string | undefined;
  for (const line of raw) {
    const open = FENCE.exec(line);
    if (fence) {
      if (line.trimStart().startsWith(fence)) fence = undefined;
      continue;
    }
    if (open) {
      fence = open[2];
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    const seen = counts.get(base) ?? 0;
    counts.set(base, seen + 1);
    found.add(seen === 0 ? base : `${base}-${seen}`);
  }
  return found;
}
