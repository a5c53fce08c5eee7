/**
 * The middleware stack's cost, measured in pairs: `ours` and `stack` run back to back (order
 * alternating), and stack/ours is the median of the per-pair ratios. The two servers differ by a
 * few percent, less than this shared machine moves between rounds (±15 %); a pair shares the
 * machine's state of the moment, and the median over pairs leaves out the ones a neighbour
 * disturbed. The throughput rounds give one pair per round (the two are adjacent in every round);
 * the runner adds `--stack-pairs` more per workload.
 */
import type { LoadResult } from './load.js';
import { median } from './median.js';
import type { WorkloadId } from './workloads.js';

export interface StackPair {
  readonly ours: LoadResult;
  readonly stack: LoadResult;
}

export interface PairedOverhead {
  readonly pairs: number;
  /** stack / ours throughput (streaming: events/s), median over the pairs; the target's measure. */
  readonly ratio: number;
  readonly min: number;
  readonly max: number;
  /** ours / stack server CPU per request (> 1: stack cheaper), median over the pairs. */
  readonly cpuRatio: number;
  readonly cpuMin: number;
  readonly cpuMax: number;
}

const rate = (r: LoadResult) => (r.workload === 'stream' ? r.eventsPerSec : r.reqPerSec);

/** Median, smallest and largest of the per-pair ratios; undefined without a usable pair. */
export function pairedOverhead(pairs: readonly StackPair[]): PairedOverhead | undefined {
  const usable = pairs.filter((p) => rate(p.ours) > 0 && rate(p.stack) > 0);
  if (usable.length === 0) return undefined;
  const ratios = usable.map((p) => rate(p.stack) / rate(p.ours));
  const cpu = usable
    .filter((p) => p.stack.cpuMicrosPerRequest > 0 && Number.isFinite(p.ours.cpuMicrosPerRequest))
    .map((p) => p.ours.cpuMicrosPerRequest / p.stack.cpuMicrosPerRequest);
  return {
    pairs: usable.length,
    ratio: median(ratios),
    min: Math.min(...ratios),
    max: Math.max(...ratios),
    cpuRatio: median(cpu),
    cpuMin: cpu.length > 0 ? Math.min(...cpu) : Number.NaN,
    cpuMax: cpu.length > 0 ? Math.max(...cpu) : Number.NaN,
  };
}

/**
 * `count` more pairs of each workload, measured by `measure` (undefined: that run failed, the pair
 * is dropped). The order alternates per pair so that neither server is always measured first.
 */
export async function measureExtraPairs(
  workloads: readonly WorkloadId[],
  count: number,
  measure: (server: 'ours' | 'stack', workload: WorkloadId, label: string) => Promise<LoadResult | undefined>,
): Promise<Map<WorkloadId, StackPair[]>> {
  const extra = new Map<WorkloadId, StackPair[]>();
  for (const workload of workloads) {
    const pairs: StackPair[] = [];
    for (let i = 0; i < count; i += 1) {
      const label = `stack pair ${i + 1}/${count}`;
      const first = i % 2 === 0 ? 'ours' : 'stack';
      const a = await measure(first, workload, label);
      const b = await measure(first === 'ours' ? 'stack' : 'ours', workload, label);
      if (!a || !b) continue;
      pairs.push(first === 'ours' ? { ours: a, stack: b } : { ours: b, stack: a });
    }
    extra.set(workload, pairs);
  }
  return extra;
}

const fmt = (r: number) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : 'n/a');

/** The report's section: one row per workload. */
export function pairedSection(paired: Readonly<Record<string, PairedOverhead>>, titleOf: (w: WorkloadId) => string): string[] {
  const rows = Object.entries(paired);
  if (rows.length === 0) return [];
  return [
    '### Middleware stack, paired',
    '',
    '`ours` and `stack` measured back to back (one pair per throughput round, plus the extra pairs), order alternating; ' +
      "each pair gives stack/ours, and the median over the pairs is the stack-overhead target's measure. The two differ " +
      'by less than this machine moves between rounds: a pair shares the moment, and the median leaves out the pairs a ' +
      'neighbour disturbed. Range: the smallest and largest pair.',
    '',
    '| Workload | Pairs | stack/ours (median) | range | CPU-based (median) | range |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      ([w, p]) =>
        `| ${titleOf(w as WorkloadId)} | ${p.pairs} | ${fmt(p.ratio)} | ${fmt(p.min)} – ${fmt(p.max)} | ${fmt(p.cpuRatio)} | ${fmt(p.cpuMin)} – ${fmt(p.cpuMax)} |`,
    ),
    '',
  ];
}
