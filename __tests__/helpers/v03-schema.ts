/**
 * The A2A v0.3 JSON schema (shared/a2a-spec/v0.3-a2a.json in a folder above the repository, or the file named
 * by A2A_V03_SCHEMA) compiled with ajv: `expectV03(name, value)` fails the test with ajv's errors
 * when `value` is not a valid v0.3 `definitions/<name>`. The schema is the spec's, not ours, so it
 * is not in the repository. Where it is missing (a clone on its own) every schema check FAILS, naming
 * the path to provide: a check that silently checks nothing would pass for any shape.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

const SCHEMA_PATH = process.env.A2A_V03_SCHEMA ?? findBesideRepository('shared/a2a-spec/v0.3-a2a.json');

/** `relative` in the nearest folder above the repository that has it (../shared in CI; ../../shared from a git worktree). */
function findBesideRepository(relative: string): string {
  const nearest = resolve(__dirname, '../../..', relative);
  for (let folder = resolve(__dirname, '../../..'); ; folder = dirname(folder)) {
    const candidate = join(folder, relative);
    if (existsSync(candidate)) return candidate;
    if (dirname(folder) === folder) return nearest;
  }
}
const SCHEMA_PRESENT = existsSync(SCHEMA_PATH);
/** Whether the schema was found (a test asserts it, so a run without it cannot look green). */
export const v03SchemaPresent = SCHEMA_PRESENT;
const MISSING = `the v0.3 JSON schema was not found at ${SCHEMA_PATH} (put ../shared/a2a-spec beside the repository, or set A2A_V03_SCHEMA): nothing could be checked`;

let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function validator(name: string): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')), 'a2a-v0.3');
  }
  let validate = compiled.get(name);
  if (!validate) {
    validate = ajv.getSchema(`a2a-v0.3#/definitions/${name}`);
    if (!validate) throw new Error(`no definition ${name} in the v0.3 schema`);
    compiled.set(name, validate);
  }
  return validate;
}

/** The ajv errors of `value` against v0.3 `definitions/<name>` (empty when valid; one error when the schema is missing). */
export function v03Errors(name: string, value: unknown): string[] {
  if (!SCHEMA_PRESENT) return [MISSING];
  const validate = validator(name);
  // JSON round trip: what goes on the wire, without undefined-valued keys.
  if (validate(JSON.parse(JSON.stringify(value)))) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Asserts that `value` is a valid v0.3 `definitions/<name>`. */
export function expectV03(name: string, value: unknown): void {
  expect({ name, errors: v03Errors(name, value) }).toEqual({ name, errors: [] });
}
