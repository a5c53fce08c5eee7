/** The builders every A2A schema is made of, so each field's message names it; bounds on free-form JSON and oneofs. */
import { z } from 'zod';

/** Schema params whose message says "<field> is required" when absent, else "<field> must be <expected>". */
export function fieldError(field: string, expected: string) {
  return {
    error: (issue: { input?: unknown }) => (issue.input === undefined ? `${field} is required` : `${field} must be ${expected}`),
  };
}

/** Optional string (an empty string is the ProtoJSON default and therefore allowed). */
export const optionalString = (field: string) => z.string(fieldError(field, 'a string')).optional();

export const requiredString = (field: string) => z.string(fieldError(field, 'a string')).min(1, { error: `${field} must not be empty` });

export const optionalBoolean = (field: string) => z.boolean(fieldError(field, 'a boolean')).optional();

/** Optional int32 of at least 0 (a plain int32 in the proto). */
export const optionalNonNegativeInt32 = (field: string) =>
  z
    .int(fieldError(field, 'an integer'))
    .min(0, { error: `${field} must be >= 0` })
    .max(2_147_483_647, { error: `${field} is too large` })
    .optional();

export const optionalStringList = (field: string) =>
  z.array(z.string(fieldError(`${field} entries`, 'strings')), fieldError(field, 'an array of strings')).optional();

export const requiredStringList = (field: string) =>
  z
    .array(z.string(fieldError(`${field} entries`, 'strings')), fieldError(field, 'an array of strings'))
    .min(1, { error: `${field} must have at least one entry` });

/** Deepest nesting accepted in a Struct or Value (`{}` is 1): deeper input would overflow the stack where it is copied. */
export const MAX_JSON_DEPTH = 64;

/** True when `value` nests deeper than `levels`; iterative, so no input can overflow the stack (a cycle counts as too deep). */
export function exceedsJsonDepth(value: unknown, levels = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const pending: object[] = [value];
  const depths: number[] = [1];
  while (pending.length > 0) {
    const node = pending.pop()!;
    const depth = depths.pop()!;
    if (depth > levels) return true;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child === 'object' && child !== null) {
          pending.push(child);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key in node) {
      if (!Object.hasOwn(node, key)) continue;
      const child: unknown = (node as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        pending.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

const boundedDepth = (field: string) =>
  [(value: unknown) => !exceedsJsonDepth(value), { error: `${field} must not nest deeper than ${MAX_JSON_DEPTH} levels`, abort: true }] as const;

/** google.protobuf.Struct: a plain JSON object, nested at most MAX_JSON_DEPTH levels. */
export const struct = (field: string) => z.record(z.string(), z.unknown(), fieldError(field, 'a JSON object')).refine(...boundedDepth(field));

/** google.protobuf.Value: any JSON value (null included), nested at most MAX_JSON_DEPTH levels. */
export const jsonValue = (field: string) => z.unknown().refine(...boundedDepth(field));

/** Optional google.protobuf.Struct (see `struct`). */
export const optionalMetadata = (field = 'metadata') => struct(field).optional();

/** Counts the members of a oneof that hold a value (`null` counts: it is a valid `Value`). */
function countMembers(value: Record<string, unknown>, members: readonly string[]): number {
  let count = 0;
  // Not `in`: an explicit `undefined` in a server-built object is absent.
  for (const key of members) if (value[key] !== undefined) count++;
  return count;
}

/** Refinement params for a oneof: exactly one of `members` must be set. */
export function exactlyOne(what: string, members: readonly string[]) {
  const message = `${what} must have exactly one of ${members.join(', ')}`;
  return [(value: Record<string, unknown>) => countMembers(value, members) === 1, { error: message }] as const;
}

/** Turns an object type of optional oneof members into a union with exactly one member set. */
export type OneOf<T> = { [K in keyof T]-?: { [P in K]-?: Exclude<T[P], undefined> } }[keyof T];
