/** The harness of every contract suite: plain describe/it and node:assert (jest, vitest, mocha, node:test alike). */
// Each test uses fresh random scopes and ids, so one shared backend works; it cleans up what it made and names a hang.

/** A `describe` as jest, vitest, mocha and node:test all accept it. */
export type ContractDescribe = (name: string, body: () => void) => unknown;
/** An `it`: the third argument is a timeout in ms (jest, vitest; mocha and node:test ignore it). */
export type ContractIt = (name: string, body: () => Promise<void>, timeoutMs?: number) => unknown;

/** The options every contract suite takes. */
export interface ContractHarnessOptions<I> {
  /** Defaults to the global `describe`. */
  describe?: ContractDescribe;
  /** Defaults to the global `it`. */
  it?: ContractIt;
  /** Runs after each test for every instance it made. */
  cleanup?: (instance: I) => void | Promise<void>;
  /** Per test, instance creation and cleanup included. */
  timeoutMs?: number;
}

/** A contract test: each instance `run` pushes onto `made` is cleaned up after, within the test's timeout. */
type ContractTest<I> = (rule: string, run: (made: I[]) => Promise<void>) => void;

interface ContractHarness<I> {
  readonly describe: ContractDescribe;
  readonly test: ContractTest<I>;
}

/** The harness of `suite` (named in errors): describe and it from the options or the globals. */
export function contractHarness<I>(
  suite: string,
  options: ContractHarnessOptions<I>,
  defaults: { readonly timeoutMs: number; readonly cleanup?: (instance: I) => void | Promise<void> },
): ContractHarness<I> {
  const globals = globalThis as { describe?: ContractDescribe; it?: ContractIt };
  const describe = options.describe ?? globals.describe;
  const it = options.it ?? globals.it;
  if (!describe || !it) {
    throw new TypeError(`${suite}: no global describe/it; pass { describe, it } from your test framework`);
  }
  const timeoutMs = options.timeoutMs ?? defaults.timeoutMs;
  const cleanup = options.cleanup ?? defaults.cleanup;
  // Zero-parameter bodies: mocha would read a parameter as a `done` callback.
  const test: ContractTest<I> = (rule, run) =>
    it(
      rule,
      async () => {
        const made: I[] = [];
        await withTimeout(rule, timeoutMs, async () => {
          try {
            await run(made);
          } finally {
            for (const instance of made) await cleanup?.(instance);
          }
        });
      },
      timeoutMs + 1_000,
    );
  return { describe, test };
}

/** Tests on one fresh instance each, from `make`: the body gets it, and it is cleaned up after. */
export const onFreshInstance =
  <I>(test: ContractTest<I>, make: () => I | Promise<I>) =>
  (rule: string, body: (instance: I) => Promise<void>): void =>
    test(rule, async (made) => {
      const instance = await make();
      made.push(instance);
      await body(instance);
    });

/** Runs `run`, failing with a message naming the rule when it takes over `timeoutMs`. */
async function withTimeout(rule: string, timeoutMs: number, run: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`"${rule}" did not finish within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([run(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
