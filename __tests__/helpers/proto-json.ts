/**
 * A strict ProtoJSON reading of a2a.proto (see spec-files.ts): `expectProtoJson(type, value)` fails the
 * test, naming each JSON path, unless `value` is exactly message `type`'s JSON shape as a strict
 * ProtoJSON parser reads it (every key a field, a oneof holding one key, REQUIRED fields present).
 */
import { readFileSync } from 'node:fs';
import { specFile } from './spec-files';

interface ProtoField {
  readonly jsonName: string;
  /** A message or enum name, or a scalar type. */
  readonly type: string;
  readonly repeated: boolean;
  /** The value type of a map (keys are strings in JSON). */
  readonly mapValue?: string;
  readonly oneof?: string;
  readonly required: boolean;
}

interface ProtoMessage {
  readonly fields: Map<string, ProtoField>;
  readonly oneofs: Set<string>;
}

const PROTO_PATH = specFile('a2a.proto');

/** Fails the test with every violation when `value` is not exactly the ProtoJSON of message `type` (skipped without the file). */
export function expectProtoJson(type: string, value: unknown): void {
  if (PROTO_PATH) expect(protoJsonViolations(PROTO_PATH, type, value)).toEqual([]);
}

/** protoc's json_name: snake_case to lowerCamelCase. */
const jsonNameOf = (name: string) => name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** The messages and enums of a .proto file (top-level messages, as a2a.proto has them). */
export function readProto(file: string): { messages: Map<string, ProtoMessage>; enums: Map<string, Set<string>> } {
  const text = readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '');
  const messages = new Map<string, ProtoMessage>();
  const enums = new Map<string, Set<string>>();
  const block = /^(message|enum)\s+(\w+)\s*\{([\s\S]*?)^\}/gm;
  for (const [, kind, name, body] of text.matchAll(block)) {
    if (kind === 'enum') {
      enums.set(name, new Set([...body.matchAll(/^\s*(\w+)\s*=\s*\d+/gm)].map((m) => m[1])));
      continue;
    }
    const fields = new Map<string, ProtoField>();
    const oneofs = new Set<string>();
    let oneof: string | undefined;
    for (const line of body.split('\n')) {
      const opened = /^\s*oneof\s+(\w+)\s*\{/.exec(line);
      if (opened) {
        oneofs.add((oneof = opened[1]));
        continue;
      }
      if (/^\s*\}/.test(line)) {
        oneof = undefined;
        continue;
      }
      const map = /^\s*map<\s*\w+\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*\d+(.*);/.exec(line);
      const field = map ? undefined : /^\s*(repeated\s+|optional\s+)?([\w.]+)\s+(\w+)\s*=\s*\d+(.*);/.exec(line);
      if (map) {
        fields.set(jsonNameOf(map[2]), {
          jsonName: jsonNameOf(map[2]),
          type: 'map',
          repeated: false,
          mapValue: map[1],
          required: map[3].includes('REQUIRED'),
        });
      } else if (field) {
        const jsonName = jsonNameOf(field[3]);
        fields.set(jsonName, { jsonName, type: field[2], repeated: field[1]?.trim() === 'repeated', oneof, required: field[4].includes('REQUIRED') });
      }
    }
    messages.set(name, { fields, oneofs });
  }
  return { messages, enums };
}

/**
 * Every way `value` departs from the ProtoJSON of message `type` ([] when it is exactly that
 * shape), each naming the JSON path: unknown keys, a oneof with other than one key, a missing
 * REQUIRED field, a value of the wrong JSON type.
 */
export function protoJsonViolations(file: string, type: string, value: unknown): string[] {
  const { messages, enums } = readProto(file);
  const out: string[] = [];
  const scalar = (kind: string, v: unknown, at: string) => {
    const ok: Record<string, (v: unknown) => boolean> = {
      string: (x) => typeof x === 'string',
      bytes: (x) => typeof x === 'string',
      bool: (x) => typeof x === 'boolean',
      int32: (x) => Number.isInteger(x),
      int64: (x) => Number.isInteger(x) || (typeof x === 'string' && /^-?\d+$/.test(x)),
      'google.protobuf.Struct': (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
      'google.protobuf.Value': () => true,
      'google.protobuf.Timestamp': (x) => typeof x === 'string',
    };
    const enumValues = enums.get(kind);
    if (enumValues) {
      if (typeof v !== 'string' || !enumValues.has(v)) out.push(`${at}: not a value of enum ${kind}`);
    } else if (!ok[kind]) out.push(`${at}: type ${kind} is not known to this checker`);
    else if (!ok[kind](v)) out.push(`${at}: not a ProtoJSON ${kind}`);
  };
  const check = (kind: string, v: unknown, at: string): void => {
    const message = messages.get(kind);
    if (!message) return scalar(kind, v, at);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      out.push(`${at}: not an object (message ${kind})`);
      return;
    }
    const record = v as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!message.fields.has(key)) out.push(`${at}.${key}: no such field in ${kind}`);
    }
    for (const oneof of message.oneofs) {
      const set = [...message.fields.values()].filter((f) => f.oneof === oneof && record[f.jsonName] !== undefined).map((f) => f.jsonName);
      if (set.length !== 1) out.push(`${at}: oneof ${kind}.${oneof} holds ${set.length} keys (${set.join(', ')}), not exactly one`);
    }
    for (const field of message.fields.values()) {
      const fieldValue = record[field.jsonName];
      const path = `${at}.${field.jsonName}`;
      if (fieldValue === undefined) {
        if (field.required) out.push(`${path}: REQUIRED in ${kind}, missing`);
        continue;
      }
      if (field.mapValue) {
        if (typeof fieldValue !== 'object' || fieldValue === null || Array.isArray(fieldValue)) out.push(`${path}: not an object (map)`);
        else for (const [key, entry] of Object.entries(fieldValue)) check(field.mapValue, entry, `${path}[${JSON.stringify(key)}]`);
      } else if (field.repeated) {
        if (!Array.isArray(fieldValue)) out.push(`${path}: not an array (repeated)`);
        else fieldValue.forEach((entry, i) => check(field.type, entry, `${path}[${i}]`));
      } else check(field.type, fieldValue, path);
    }
  };
  check(type, value, type);
  return out;
}
