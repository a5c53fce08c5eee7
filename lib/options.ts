/**
 * Options validation shared by every factory: zod at construction time, one error that names the factory and every bad option (nested ones too) with
 * its fix where known, a "did you mean" hint for a likely typo, "did you forget `await`?" for a Promise, and the branch the user meant when an option
 * accepts several shapes.
 */
import { z } from 'zod';
import { agentCardFix, type OptionFixes } from './protocol/card-problems.js';

export class A2AOptionsError extends TypeError {
  readonly code = 'ERR_A2A_OPTIONS';
  constructor(message: string) {
    super(message);
    this.name = 'A2AOptionsError';
  }
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length];
}

/** A check for option objects: `value` is an object with these methods (a store, a logger, a client). */
export const hasMethods =
  (...names: string[]) =>
  (value: unknown): boolean =>
    typeof value === 'object' && value !== null && names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function');

/** The known key closest to `key`, when it is close enough to be a typo. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

type Issue = z.core.$ZodIssue;

/** `factory: option "path": detail` (the core's wording). */
export function optionsError(factory: string, option: string, detail: string): A2AOptionsError {
  return new A2AOptionsError(`${factory}: option "${option}": ${detail}`);
}

/**
 * Object keys a schema accepts at `path` (through optional/default/nullable wrappers, unions and pipes), read through zod's public accessors (unwrap,
 * options, in, shape).
 */
function knownKeysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  if (
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodNullable ||
    schema instanceof z.ZodPrefault ||
    schema instanceof z.ZodReadonly
  ) {
    return knownKeysAt(schema.unwrap(), path);
  }
  if (schema instanceof z.ZodUnion) return schema.options.flatMap((option) => knownKeysAt(option, path));
  if (schema instanceof z.ZodPipe) return knownKeysAt(schema.in, path);
  if (schema instanceof z.ZodArray) return path.length > 0 ? knownKeysAt(schema.element, path.slice(1)) : [];
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, z.core.$ZodType>;
    if (path.length === 0) return Object.keys(shape);
    const child = shape[String(path[0])];
    return child ? knownKeysAt(child, path.slice(1)) : [];
  }
  return [];
}

/**
 * For a union failure, the branch the user meant: not rejected at its root for its type, and among those the one that got deepest into the value
 * (e.g. the array branch for `[badSource]`).
 */
function bestUnionBranch(issue: Extract<Issue, { code: 'invalid_union' }>): Issue[] | undefined {
  const branches = issue.errors.filter((branch) => !branch.some((inner) => inner.path.length === 0 && inner.code === 'invalid_type'));
  if (branches.length <= 1) return branches[0];
  const depth = (branch: Issue[]) => Math.min(...branch.map((inner) => inner.path.length));
  const deepest = Math.max(...branches.map(depth));
  const best = branches.filter((branch) => depth(branch) === deepest);
  return best.length === 1 ? best[0] : undefined;
}

function flatten(issues: readonly Issue[], prefix: readonly PropertyKey[] = []): Issue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union') {
      const branch = bestUnionBranch(issue);
      if (branch) return flatten(branch, path);
    }
    return [{ ...issue, path } as Issue];
  });
}

function detail(issue: Issue): string {
  return issue.message.replace(/^Invalid input: /, '');
}

/** A Promise, or anything with a then() method: what an options field holds when an `await` was forgotten. */
function isThenable(value: unknown): boolean {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

const AWAIT_HINT = 'is a Promise, not the value it resolves to: did you forget `await`?';

/**
 * Set on a Promise a factory returns (markUnawaitedSpread): an own enumerable symbol key survives the spread `{ ...createX(opts) }` of the un-awaited
 * Promise, while the values the user meant do not.
 */
const UNAWAITED_SPREAD = Symbol.for('a2a-express-kit.unawaitedSpread');

/**
 * Marks the Promise an async factory returns so that spreading it un-awaited into another factory's options is reported there: `{
 * ...createRedisBackend(opts) }` spreads a Promise, which adds nothing.
 */
export function markUnawaitedSpread<T>(promise: Promise<T>, factory: string, spreadInstead: string): Promise<T> {
  Object.defineProperty(promise, UNAWAITED_SPREAD, { value: { factory, spreadInstead }, enumerable: true });
  return promise;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** Paths to thenables in the option values, through plain objects only (a store instance is not walked). */
function thenablePaths(input: Record<string, unknown>, prefix: readonly string[] = [], out: string[][] = []): string[][] {
  for (const [key, value] of Object.entries(input)) {
    if (isThenable(value)) out.push([...prefix, key]);
    else if (prefix.length < 3 && isPlainObject(value)) thenablePaths(value, [...prefix, key], out);
  }
  return out;
}

/** The input's value at `path` (undefined when a step is missing). */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const step of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[step];
  }
  return value;
}

/** How to fix a problem below a root option of that name, by its path (the card's hints live with the card). */
const FIXES: ReadonlyMap<string, OptionFixes> = new Map([['agentCard', agentCardFix]]);

/** Problems past this many are counted, not listed: the first ones are enough to start. */
const MAX_LISTED = 20;

/**
 * Parses `input` or throws an A2AOptionsError naming every bad option at once, each with its path: unknown keys first (with a "did you mean"), then
 * the values zod refused, with the fix where one is known. A Promise where a value belongs says "did you forget `await`?". One problem reads as
 * before: `factory: option "path": detail`; several are listed one a line below a count.
 */
export function parseOptions<S extends z.ZodType>(factory: string, schema: S, input: unknown): z.output<S> {
  if (isThenable(input)) {
    throw new A2AOptionsError(`${factory}: got a Promise instead of an options object: did you forget \`await\`?`);
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new A2AOptionsError(
      `${factory}: expected an options object, got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}`,
    );
  }
  const spread = (input as Record<PropertyKey, unknown>)[UNAWAITED_SPREAD] as { factory: string; spreadInstead: string } | undefined;
  if (spread) {
    throw new A2AOptionsError(
      `${factory}: the options spread an un-awaited ${spread.factory}() Promise, which adds nothing to them: ` +
        `await it first, e.g. ...(await ${spread.factory}(options))${spread.spreadInstead}`,
    );
  }
  const promises = thenablePaths(input as Record<string, unknown>);
  const result = schema.safeParse(input);
  if (result.success && promises.length === 0) return result.data;

  const problems: string[] = promises.map((path) => `option "${path.join('.')}" ${AWAIT_HINT}`);
  const underPromise = (path: readonly PropertyKey[]) => promises.some((p) => p.every((step, i) => String(path[i]) === step));
  const issues = result.success ? [] : flatten(result.error.issues).filter((issue) => !underPromise(issue.path));
  // A typo also makes the intended key look missing: that second report is dropped.
  const typoTargets = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const where = issue.path.map(String).join('.');
    const known = knownKeysAt(schema, issue.path);
    const qualify = (name: string) => (where ? `${where}.${name}` : name);
    for (const key of issue.keys) {
      const hint = closestKey(key, known);
      if (hint) typoTargets.add(qualify(hint));
      problems.push(
        `option "${qualify(key)}" is unknown` + (hint ? ` (did you mean "${qualify(hint)}"?)` : known.length ? ` (known: ${known.join(', ')})` : ''),
      );
    }
  }
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') continue;
    const where = issue.path.map(String).join('.') || '(root)';
    const missing = issue.path.length > 0 && valueAt(input, issue.path) === undefined;
    if (missing && typoTargets.has(where)) continue;
    problems.push(`option "${where}": ${explain(schema, input, issue, missing)}`);
  }
  const lines = problems.slice(0, MAX_LISTED);
  if (problems.length > MAX_LISTED) lines.push(`and ${problems.length - MAX_LISTED} more`);
  throw new A2AOptionsError(
    lines.length === 1 ? `${factory}: ${lines[0]}` : `${factory}: ${problems.length} problems in the options:\n  - ${lines.join('\n  - ')}`,
  );
}

/** What is wrong, then how to fix it: a near-miss key in the input, the option's own fix hints, or a value that holds the one meant. */
function explain(schema: z.ZodType, input: unknown, issue: Issue, missing: boolean): string {
  const text = detail(issue);
  const [option, ...rest] = issue.path;
  const value = valueAt(input, issue.path);
  const last = issue.path[issue.path.length - 1];
  if (missing && typeof last === 'string') {
    // An object that drops unknown keys (the agent card) hides a typo: name the near miss.
    const parent = valueAt(input, issue.path.slice(0, -1));
    if (isPlainObject(parent)) {
      const known = new Set(knownKeysAt(schema, issue.path.slice(0, -1)));
      const nearMiss = closestKey(
        last,
        Object.keys(parent).filter((key) => !known.has(key)),
      );
      if (nearMiss) return `${text} (the object has "${nearMiss}": did you mean "${last}"?)`;
    }
  }
  const fix = typeof option === 'string' ? FIXES.get(option)?.(rest, { code: issue.code, missing }) : undefined;
  if (fix) return `${text}; ${fix}`;
  // `taskStore: backend` where backend.taskStore is the store: say which property to pass.
  if (typeof last === 'string' && typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[last] === 'object') {
    const options = (value as { options?: unknown }).options;
    const backend = typeof options === 'object' && options !== null && last in options;
    return `${text}; the value holds a "${last}" of its own${backend ? ' (a backend?)' : ''}: pass its .${last}${backend ? ', or spread its options: ...backend.options' : ''}`;
  }
  return text;
}

/** Validates a helper's single positional argument, e.g. header(name). */
export function parseArgument<T>(helper: string, name: string, schema: z.ZodType<T>, value: unknown): T {
  if (isThenable(value)) throw new A2AOptionsError(`${helper}: argument "${name}" ${AWAIT_HINT}`);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new A2AOptionsError(`${helper}: argument "${name}": ${detail(flatten(result.error.issues)[0])}`);
}

export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

const noop = (): void => {};

/** Default: warnings and errors to the console, nothing else. Pass your pino instance instead. */
export const consoleLogger: Logger = {
  debug: noop,
  info: noop,
  // eslint-disable-next-line no-console
  warn: (obj, msg) => console.warn('[a2a-express-kit]', msg ?? '', obj),
  // eslint-disable-next-line no-console
  error: (obj, msg) => console.error('[a2a-express-kit]', msg ?? '', obj),
};

/** Discards everything (tests, benchmarks). */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/** A zod check for a function option, with a message saying what was expected. */
export function fn<T extends (...args: never[]) => unknown>(what: string) {
  return z.custom<T>((value) => typeof value === 'function', { error: `must be ${what}` });
}
