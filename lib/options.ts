/**
 * Options validation shared by every factory: zod at construction time, errors that name the
 * factory and the option, and a "did you mean" hint for a likely typo.
 */
import type { z } from 'zod';
import { formatPath } from './protocol/jsonrpc.js';

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
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

/** Parses `input` or throws an A2AOptionsError such as `createA2ARouter: option "excutor" is unknown (did you mean "executor"?)`. */
export function parseOptions<S extends z.ZodObject>(factory: string, schema: S, input: unknown): z.output<S> {
  if (typeof input !== 'object' || input === null) {
    throw new A2AOptionsError(`${factory}: expected an options object, got ${input === null ? 'null' : typeof input}`);
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const known = Object.keys(schema.shape);
  const lines = result.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys
        .map((key) => {
          const hint = closestKey(key, known);
          const where = issue.path.length ? `${formatPath(issue.path)}.${key}` : key;
          return `option "${where}" is unknown${hint && issue.path.length === 0 ? ` (did you mean "${hint}"?)` : ''}`;
        })
        .join('; ');
    }
    return `option "${formatPath(issue.path) || '(root)'}": ${issue.message}`;
  });
  throw new A2AOptionsError(`${factory}: ${lines.join('; ')}`);
}
