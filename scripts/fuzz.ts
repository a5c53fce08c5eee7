/**
 * The fuzz suite, longer: `npm run fuzz -- --requests 100000 --seed N [--concurrency 16]`, or
 * `--case 17,42` to replay cases of a seed one by one. Same generator and checks as
 * __tests__/fuzz/fuzz.test.ts; exits 1 when anything was found.
 */
import { seedFrom } from '../__tests__/fuzz/generator';
import { formatReport, runFuzz } from '../__tests__/fuzz/harness';

const USAGE = 'usage: npm run fuzz -- [--requests N] [--seed N] [--concurrency N] [--case I[,J...]]';

function parseArgs(argv: string[]): Record<string, string> {
  const args: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    if (!['--requests', '--seed', '--concurrency', '--case'].includes(flag)) throw new Error(`unknown argument ${argv[i]}\n${USAGE}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    args[flag.slice(2)] = value;
  }
  return args;
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${value}`);
  return n;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const seed = seedFrom(args.seed ?? process.env.FUZZ_SEED);
  const requests = positiveInt('requests', args.requests, 10_000);
  const concurrency = positiveInt('concurrency', args.concurrency, 16);
  const only = args.case?.split(',').map((s) => {
    const index = Number(s);
    if (!Number.isInteger(index) || index < 0) throw new Error(`--case takes case indexes (integers >= 0), got ${s}`);
    return index;
  });
  const total = only?.length ?? requests;
  console.log(`fuzz: seed ${seed}, ${total} requests, concurrency ${concurrency}`);
  const report = await runFuzz({
    seed,
    requests,
    concurrency,
    only,
    maxFindings: 200,
    progressEvery: 5_000,
    onProgress: (done, findings) => console.log(`  ${done}/${total} requests, ${findings} findings`),
  });
  console.log(formatReport(report));
  console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  const clean =
    report.findings.length +
      report.unexpectedErrorLogs.length +
      report.prototypeChanges.length +
      report.processErrors.length +
      report.leaks.length ===
    0;
  process.exitCode = clean ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 2;
});
