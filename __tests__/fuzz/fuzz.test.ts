/**
 * Seeded fuzzing of the JSON-RPC endpoint: mutated requests (wrong types, missing fields, prototype
 * and duplicate keys, deep nesting, odd ids, batches, content types and encodings, huge strings,
 * every method name) against a bare router and one behind the middleware preset. Every reply must be
 * a JSON-RPC envelope with a spec code and no internals; the process stays up, the prototypes clean.
 * The seed is random unless FUZZ_SEED is set, and printed with any failure; FUZZ_REQUESTS overrides
 * the count. Longer runs: `npm run fuzz -- --requests 100000 --seed N`.
 */
import { seedFrom } from './generator';
import { formatReport, runFuzz } from './harness';

const seed = seedFrom(process.env.FUZZ_SEED);
const requests = Number(process.env.FUZZ_REQUESTS ?? 2_500);

describe('fuzzing the JSON-RPC endpoint', () => {
  // The seed is in the title too, so that even a timeout names it.
  it(`answers every one of ${requests} mutated requests with a clean JSON-RPC reply (FUZZ_SEED=${seed})`, async () => {
    const report = await runFuzz({ seed, requests });
    const clean =
      report.findings.length === 0 &&
      report.unexpectedErrorLogs.length === 0 &&
      report.prototypeChanges.length === 0 &&
      report.processErrors.length === 0 &&
      report.leaks.length === 0;
    // The whole report (seed first) is the failure message: the cases it lists replay one by one.
    if (!clean) throw new Error(formatReport(report));
    expect(report.requests).toBeGreaterThanOrEqual(2_000);
  }, 180_000);
});
