/**
 * The A2A v0.3 JSON schema (../shared/a2a-spec/v0.3-a2a.json beside the repository, or the file named
 * by A2A_V03_SCHEMA) compiled with ajv: `expectV03(name, value)` fails the test with ajv's errors
 * when `value` is not a valid v0.3 `definitions/<name>`. The schema is the spec's, not ours, so it
 * is not in the repository: where it is missing (a clone on its own), the schema checks are skipped
 * with one warning, except under CI, which always has it and must check.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

const SCHEMA_PATH = process.env.A2A_V03_SCHEMA ?? resolve(__dirname, '../../../shared/a2a-spec/v0.3-a2a.json');
const SCHEMA_PRESENT = existsSync(SCHEMA_PATH);
/** Whether this run checks shapes against the schema (always under CI). */
export const v03SchemaPresent = SCHEMA_PRESENT;
if (!SCHEMA_PRESENT && process.env.CI) throw new Error(`the v0.3 JSON schema is missing at ${SCHEMA_PATH}; CI must validate against it`);
let warned = false;

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

/** The ajv errors of `value` against v0.3 `definitions/<name>` (empty when valid). */
export function v03Errors(name: string, value: unknown): string[] {
  if (!SCHEMA_PRESENT) {
    if (!warned) console.warn(`v0.3 JSON schema not found at ${SCHEMA_PATH}: v0.3 shapes are not schema-checked in this run (set A2A_V03_SCHEMA)`);
    warned = true;
    return [];
  }
  const validate = validator(name);
  // JSON round trip: what goes on the wire, without undefined-valued keys.
  if (validate(JSON.parse(JSON.stringify(value)))) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Asserts that `value` is a valid v0.3 `definitions/<name>`. */
export function expectV03(name: string, value: unknown): void {
  expect({ name, errors: v03Errors(name, value) }).toEqual({ name, errors: [] });
}
