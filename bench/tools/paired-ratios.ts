/**
 * CPU ratios of two servers paired round by round, from one or more `npm run bench` reports. A run's
 * rounds are interleaved (every server once per round), so the two cells of one round share the
 * machine's state of that moment; on a shared machine the ratio of a pair moves much less than
 * either cell. Prints, per workload, the median of the paired ratios (b's µs ÷ a's µs, so > 1 means
 * a is cheaper; by default bare Express ÷ ours, the report's ours/ceiling column), their quartiles
 * and count, over the rounds of every report given (pooled).
 *
 *   npx tsx bench/tools/paired-ratios.ts bench/results/latest.json [more.json ...] [--a ours] [--b ceiling]
 */
import { readFileSync } from 'node:fs';
import { median } from '../median.js';

interface Round {
  cpuMicrosPerRequest: number;
}
interface Report {
  throughput: Record<string, Record<string, { rounds?: Round[] } | undefined>>;
}

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : args.splice(at, 2)[1];
};
const a = option('--a', 'ours');
const b = option('--b', 'ceiling');
if (args.length === 0) throw new Error('usage: paired-ratios.ts <report.json>... [--a ours] [--b ceiling]');

const pooled = new Map<string, number[]>();
for (const file of args) {
  const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
  for (const [workload, cells] of Object.entries(report.throughput)) {
    const ours = cells[a]?.rounds ?? [];
    const base = cells[b]?.rounds ?? [];
    const ratios = pooled.get(workload) ?? [];
    for (let i = 0; i < Math.min(ours.length, base.length); i += 1) {
      ratios.push(base[i].cpuMicrosPerRequest / ours[i].cpuMicrosPerRequest);
    }
    if (ratios.length > 0) pooled.set(workload, ratios);
  }
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
console.log(`CPU ratio ${b} µs ÷ ${a} µs per round (> 1: ${a} is cheaper), pooled over ${args.length} report(s)`);
for (const [workload, ratios] of pooled) {
  const sorted = [...ratios].sort((x, y) => x - y);
  console.log(
    `${workload.padEnd(18)} median ${median(sorted).toFixed(2)}×  quartiles ${quantile(sorted, 0.25).toFixed(2)}-${quantile(sorted, 0.75).toFixed(2)}  rounds ${sorted.length}`,
  );
}
