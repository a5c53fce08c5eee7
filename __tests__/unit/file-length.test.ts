/**
 * The repository's file limit (issue 17): no source file in lib/ over 400 lines. A file
 * that grows past it is split by job, as the SQLite, Redis and PostgreSQL stores are.
 */
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const MAX_FILE_LINES = 400;

/** Every .ts file under `dir` (relative to the repository root), recursively. */
function tsFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...tsFiles(relative));
    else if (entry.name.endsWith('.ts')) found.push(relative);
  }
  return found.sort();
}

/** Lines as `wc -l` counts them for a file that ends with a newline. */
function lineCount(file: string): number {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('file limit', () => {
  it(`has no file over ${MAX_FILE_LINES} lines in lib/`, () => {
    const files = tsFiles('lib');
    expect(files.length).toBeGreaterThan(100); // the walk found the sources
    const tooLong = files.map((file) => ({ file, lines: lineCount(file) })).filter(({ lines }) => lines > MAX_FILE_LINES);
    expect(tooLong.map(({ file, lines }) => `${file}: ${lines} lines`)).toEqual([]);
  });
});
