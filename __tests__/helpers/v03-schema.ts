/**
 * The A2A v0.3 JSON schema (see spec-files.ts) compiled with ajv: `expectV03(name, value)` fails the
 * test with ajv's errors when `value` is not a valid v0.3 `definitions/<name>`; skipped without the file.
 */
import { readFileSync } from 'node:fs';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { specFile } from './spec-files';

const SCHEMA_PATH = specFile('v0.3-a2a.json');
/** Whether this run checks v0.3 shapes (always under CI). */
export const v03SchemaPresent = SCHEMA_PATH !== undefined;

let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function validator(schemaPath: string, name: string): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(JSON.parse(readFileSync(schemaPath, 'utf8')), 'a2a-v0.3');
  }
  let validate = compiled.get(name);
  if (!validate) {
    validate = ajv.getSchema(`a2a-v0.3#/definitions/${name}`);
    if (!validate) throw new Error(`no definition ${name} in the v0.3 schema`);
    compiled.set(name, validate);
  }
  return validate;
}

/** The ajv errors of `value` against v0.3 `definitions/<name>` (empty when valid or when the schema is missing). */
export function v03Errors(name: string, value: unknown): string[] {
  if (!SCHEMA_PATH) return [];
  const validate = validator(SCHEMA_PATH, name);
  // JSON round trip: what goes on the wire, without undefined-valued keys.
  if (validate(JSON.parse(JSON.stringify(value)))) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Asserts that `value` is a valid v0.3 `definitions/<name>`. */
export function expectV03(name: string, value: unknown): void {
  expect({ name, errors: v03Errors(name, value) }).toEqual({ name, errors: [] });
}
