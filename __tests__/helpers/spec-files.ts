/**
 * The upstream A2A spec files the shape checks read (a2a.proto, the v0.3 JSON schema): the spec's, not
 * ours, so not in the repository. Found in A2A_SPEC_DIR, or in `shared/a2a-spec` in the nearest folder
 * above the repository (CI puts it there). Missing: the checks are skipped (one line per run, from the
 * global setup), except under CI, where a missing file fails the run.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const REPOSITORY = resolve(__dirname, '../..');

function specDir(): string {
  if (process.env.A2A_SPEC_DIR) return resolve(process.env.A2A_SPEC_DIR);
  for (let folder = dirname(REPOSITORY); ; folder = dirname(folder)) {
    const candidate = join(folder, 'shared/a2a-spec');
    if (existsSync(candidate)) return candidate;
    if (dirname(folder) === folder) return join(dirname(REPOSITORY), 'shared/a2a-spec');
  }
}

const DIR = specDir();
const FILES = ['a2a.proto', 'v0.3-a2a.json'] as const;

/** The path of one spec file, or undefined when it is missing (and this is not CI). */
export function specFile(name: (typeof FILES)[number]): string | undefined {
  const path = join(DIR, name);
  if (existsSync(path)) return path;
  if (process.env.CI) throw new Error(`${path} is missing: CI must run the shape checks against the A2A spec`);
  return undefined;
}

/** The line the global setup prints when files are missing (undefined when all are there). */
export function specSkipLine(): string | undefined {
  const missing = FILES.filter((name) => !existsSync(join(DIR, name)));
  if (missing.length === 0) return undefined;
  return (
    `[a2a-express-kit tests] ${missing.join(' and ')} not found in ${DIR}: the shape checks against the A2A spec ` +
    `(a2a.proto ProtoJSON, v0.3 JSON schema) are SKIPPED; the rest of those tests runs. ` +
    `To run them, set A2A_SPEC_DIR to a folder holding a2a.proto and v0.3-a2a.json (CI requires them).`
  );
}
