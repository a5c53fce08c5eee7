/**
 * The small builders every A2A schema is made of (lib/protocol/schemas.ts, card-schemas.ts, the
 * request and v0.3 schemas), so that every field gets a short message naming it; and the bounds
 * on free-form JSON (Struct, Value) and oneofs.
 */
import { z } from 'zod';

/** Schema params whose message says "<field> is required" when absent, else "<field> must be <expected>". */
export function fieldError(field: string, expected: string) {
  return {
    error: (issue: { input?: unknown }) => (issue.input === undefined ? `${field} is required` : `${field} must be ${expected}`),
  };
}

/** Optional string (an empty string is the ProtoJSON default and therefore allowed). */
export const optionalString = (field: string) => z.string(fieldError(field, 'a string')).optional();

/** Required string: present and non-empty. */
export const requiredString = (field: string) => z.string(fieldError(field, 'a string')).min(1, { error: `${field} must not be empty` });

/** Optional boolean. */
export const optionalBoolean = (field: string) => z.boolean(fieldError(field, 'a boolean')).optional();

/** Optional int32 of at least 0 (a plain int32 in the proto). */
export const optionalNonNegativeInt32 = (field: string) =>
  z
    .int(fieldError(field, 'an integer'))
    .min(0, { error: `${field} must be >= 0` })
    .max(2_147_483_647, { error: `${field} is too large` })
    .optional();

/** Optional list of strings. */
export const optionalStringList = (field: string) =>
  z.array(z.string(fieldError(`${field} entries`, 'strings')), fieldError(field, 'an array of strings')).optional();

/** Required list of strings with at least one entry. */
export const requiredStringList = (field: string) =>
  z
    .array(z.string(fieldError(`${field} entries`, 'strings')), fieldError(field, 'an array of strings'))
    .min(1, { error: `${field} must have at least one entry` });

/**
 * Deepest nesting (objects and arrays) accepted in a free-form JSON field (a Struct such as
 * `metadata`, or a Value such as `Part.data`); `{}` and `[]` are 1 level. Without a bound, a
 * request nested a few thousand levels passes validation and later overflows the stack wherever
 * the value is serialized or copied (the store, an SSE frame).
 */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` nests deeper than `levels` objects/arrays. Iterative (an explicit stack, no
 * recursion), so no depth of input and no bound can overflow the call stack; a cycle (possible
 * only in objects built in code) counts as too deep.
 */
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
      // Own keys only (a parsed `"__proto__"` key is an own data property, read like any other).
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

/** Refinement params: `field` may nest at most MAX_JSON_DEPTH levels. */
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
  // `!== undefined` rather than `in`: identical for parsed JSON, and it also treats an
  // explicit `undefined` from server-built objects as "absent".
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
