/** The repository's own TypeScript sources, for the tests that check the code's structure. */
import fs from 'node:fs';
import path from 'node:path';

/** The repository root. */
export const ROOT = path.resolve(__dirname, '../..');

/** Every .ts file under `dir` (relative to the repository root, posix separators), recursively, sorted. */
export function tsFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...tsFiles(relative));
    else if (entry.name.endsWith('.ts')) found.push(relative);
  }
  return found.sort();
}
