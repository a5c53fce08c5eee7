/**
 * Options validation shared by every factory: zod at construction time, errors that name the
 * factory and the option (nested ones too), a "did you mean" hint for a likely typo, and the
 * branch the user meant when an option accepts several shapes.
 */
import { z } from 'zod';

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

/** The known key closest to `key`, when it is close enough to be a typo. */
/** A check for option objects: `value` is an object with these methods (a store, a logger, a client). */
export const hasMethods =
  (...names: string[]) =>
  (value: unknown): boolean =>
    typeof value === 'object' && value !== null && names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function');

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
 * Object keys a schema accepts at `path` (through optional/default/nullable wrappers, unions and
 * pipes), read through zod's public accessors (unwrap, options, in, shape).
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
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, z.core.$ZodType>;
    if (path.length === 0) return Object.keys(shape);
    const child = shape[String(path[0])];
    return child ? knownKeysAt(child, path.slice(1)) : [];
  }
  return [];
}

/**
 * For a union failure, the branch the user meant: not rejected at its root for its type, and among
 * those the one that got deepest into the value (e.g. the array branch for `[badSource]`).
 */
function bestUnionBranch(issue: Extract<Issue, { code: 'invalid_union' }>): Issue[] | undefined {
  const branches = issue.errors.filter(
    (branch) => !branch.some((inner) => inner.path.length === 0 && inner.code === 'invalid_type'),
  );
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

/**
 * Parses `input` or throws an A2AOptionsError naming the first bad option. An unknown key is
 * reported before anything else: a typo also makes the intended key look missing.
 */
export function parseOptions<S extends z.ZodType>(factory: string, schema: S, input: unknown): z.output<S> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new A2AOptionsError(`${factory}: expected an options object, got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}`);
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = flatten(result.error.issues);
  const issue = issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? issues[0];
  const where = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    const known = knownKeysAt(schema, issue.path);
    const hint = closestKey(key, known);
    const qualify = (name: string) => (where ? `${where}.${name}` : name);
    throw new A2AOptionsError(
      `${factory}: option "${qualify(key)}" is unknown` +
        (hint ? ` (did you mean "${qualify(hint)}"?)` : known.length ? ` (known: ${known.join(', ')})` : ''),
    );
  }
  throw optionsError(factory, where || '(root)', detail(issue));
}

/** Validates a helper's single positional argument, e.g. header(name). */
export function parseArgument<T>(helper: string, name: string, schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new A2AOptionsError(`${helper}: argument "${name}": ${detail(flatten(result.error.issues)[0])}`);
}
