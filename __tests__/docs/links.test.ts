/**
 * Every relative link in the README, docs/, bench/README.md, the examples' READMEs and the repository
 * guides points at a file that exists, and at a heading of it when it names an anchor: a moved or
 * renamed section fails here, not in a reader's browser. And the README stays short.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { anchors, markdownFiles, prose, ROOT } from './markdown';

declare const EXPRESS_MAJOR: 4 | 5;

interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  prose(file).forEach((text, index) => {
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ file, line: index + 1, target });
    }
  });
  return links;
}

const links = markdownFiles().flatMap(relativeLinks);

// Express plays no part: once, in the express5 project.
(EXPRESS_MAJOR === 5 ? describe : describe.skip)('documentation links', () => {
  it('finds the documents and their links', () => {
    expect(markdownFiles()).toEqual(expect.arrayContaining(['README.md', 'docs/options.md', 'bench/README.md']));
    expect(links.length).toBeGreaterThan(20);
  });

  it('the README stays a front page: at most 300 lines (the manual lives in docs/)', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('every relative link resolves to an existing file, and its anchor to a heading there', () => {
    const broken: string[] = [];
    for (const link of links) {
      const [path, anchor] = link.target.split('#') as [string, string | undefined];
      const target = path === '' ? link.file : normalize(join(dirname(link.file), decodeURIComponent(path)));
      const absolute = join(ROOT, target);
      if (target.startsWith('..') || !existsSync(absolute)) {
        broken.push(`${link.file}:${link.line}: ${link.target} (no file ${target})`);
        continue;
      }
      if (anchor && target.endsWith('.md') && statSync(absolute).isFile() && !anchors(target).has(anchor.toLowerCase())) {
        broken.push(`${link.file}:${link.line}: ${link.target} (no heading #${anchor} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
