/**
 * Where the heap of an idle SSE stream goes: for each server, N tasks parked, a V8 heap snapshot,
 * one idle SubscribeToTask stream per task (bench/idle-streams.ts), a second snapshot, every client
 * gone, a third. Live objects are grouped (by constructor; plain objects by their property names,
 * closures by function name and file, closure contexts by the variables they hold) and the growth
 * per stream of each group is printed, biggest first; then what `ours` holds beyond the `ceiling`
 * (a bare Express handler holding the response: Node's and Express's own cost), group by group.
 *
 *   npx tsx bench/tools/idle-heap-profile.ts [--servers ours,ceiling,sdk] [--n 2000] [--top 25] [--json out.json]
 *   npx tsx bench/tools/idle-heap-profile.ts --left-only --n 10000   # only what is left after close (two small snapshots)
 *
 * `ours` loads dist/ (npm run build), or BENCH_KIT_DIST. About 20 s per server at N = 2000 (a
 * snapshot of 10,000 streams is several hundred MB of JSON: the per-stream figures are the same).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rpcClient } from '../http.js';
import { IdleStreams } from '../idle-streams.js';
import type { MemorySnapshot } from '../servers/common.js';

const ROOT = path.resolve(__dirname, '..', '..');
const SCRIPTS: Record<string, string> = { ours: 'ours.ts', ceiling: 'ceiling.ts', sdk: 'official-sdk.ts' };

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}

// ---------------------------------------------------------------------------------------------
// Heap snapshot: live objects grouped

interface Group {
  count: number;
  bytes: number;
}

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Source file of a closure, shortened to what says whose code it is. */
function shortScript(name: string): string {
  if (!name) return '?';
  const nm = name.lastIndexOf('node_modules/');
  if (nm !== -1)
    return name
      .slice(nm + 'node_modules/'.length)
      .split('/')
      .slice(0, name.includes('/@') ? 2 : 1)
      .join('/');
  if (name.startsWith('node:')) return name;
  if (!name.includes('/')) return `node:${name}`;
  return path.relative(ROOT, name.replace(/^file:\/\//, ''));
}

/** Live objects of a heap snapshot by group: count and self size. */
function groups(file: string): Map<string, Group> {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as RawSnapshot;
  const { nodes, edges, strings } = raw;
  const meta = raw.snapshot.meta;
  const NF = meta.node_fields.length;
  const EF = meta.edge_fields.length;
  const nType = meta.node_fields.indexOf('type');
  const nName = meta.node_fields.indexOf('name');
  const nSize = meta.node_fields.indexOf('self_size');
  const nEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const nodeCount = nodes.length / NF;
  const firstEdge = new Uint32Array(nodeCount + 1);
  for (let i = 0, e = 0; i < nodeCount; i += 1) {
    firstEdge[i] = e;
    e += nodes[i * NF + nEdges] * EF;
    firstEdge[i + 1] = e;
  }
  const typeOf = (node: number) => nodeTypes[nodes[node * NF + nType]];
  const nameOf = (node: number) => strings[nodes[node * NF + nName]];
  /** Named edges of `node` (property, context, internal...) as [edge type, name, target node]. */
  const namedEdges = function* (node: number): Generator<[string, string, number]> {
    for (let e = firstEdge[node]; e < firstEdge[node + 1]; e += EF) {
      const type = edgeTypes[edges[e + eType]];
      if (type === 'element' || type === 'hidden') continue;
      yield [type, strings[edges[e + eName]], edges[e + eTo] / NF];
    }
  };
  const edgeTo = (node: number, names: string[]): number | undefined => {
    for (const [, name, to] of namedEdges(node)) if (names.includes(name)) return to;
    return undefined;
  };
  const scriptCache = new Map<number, string>();
  const scriptOf = (closure: number): string => {
    const shared = edgeTo(closure, ['shared']);
    if (shared === undefined) return '?';
    const cached = scriptCache.get(shared);
    if (cached !== undefined) return cached;
    const script = edgeTo(shared, ['script', 'script_or_debug_info']);
    const source = script === undefined ? undefined : edgeTo(script, ['name']);
    const result = shortScript(source === undefined ? '' : nameOf(source));
    scriptCache.set(shared, result);
    return result;
  };
  const keyOf = (node: number): string => {
    const type = typeOf(node);
    const name = nameOf(node);
    if (name === 'system / Context') {
      // A closure context, by the variables it holds: says which function's scope it is.
      const vars = [...namedEdges(node)].filter(([t]) => t === 'context').map(([, n]) => n);
      return `Context {${vars.slice(0, 8).join(', ')}${vars.length > 8 ? ', …' : ''}}`;
    }
    switch (type) {
      case 'object': {
        if (name !== 'Object') return name;
        const props = [...namedEdges(node)].filter(([t, n]) => t === 'property' && n !== '__proto__').map(([, n]) => n);
        return `Object {${props.slice(0, 8).join(', ')}${props.length > 8 ? ', …' : ''}}`;
      }
      case 'closure':
        return `${name || '(anonymous)'}() ${scriptOf(node)}`;
      case 'string':
      case 'concatenated string':
      case 'sliced string':
        return '(string)';
      case 'number':
        return '(heap number)';
      case 'hidden':
      case 'object shape':
        return `(${type}) ${name}`;
      case 'array':
        return `(array) ${name}`;
      case 'code':
        return `(code) ${name.startsWith('system / ') ? name : 'other'}`;
      default:
        return `(${type}) ${name}`;
    }
  };
  const result = new Map<string, Group>();
  for (let node = 0; node < nodeCount; node += 1) {
    const key = keyOf(node);
    const group = result.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += nodes[node * NF + nSize];
    result.set(key, group);
  }
  return result;
}

interface Row {
  key: string;
  count: number;
  bytes: number;
}

/** Per-stream growth of every group from `before` to `after`, biggest first. */
function diff(before: Map<string, Group>, after: Map<string, Group>, n: number): Row[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys]
    .map((key) => {
      const a = before.get(key) ?? { count: 0, bytes: 0 };
      const b = after.get(key) ?? { count: 0, bytes: 0 };
      return { key, count: (b.count - a.count) / n, bytes: (b.bytes - a.bytes) / n };
    })
    .sort((x, y) => y.bytes - x.bytes);
}

function table(rows: Row[], top: number, title: string): string {
  const total = rows.reduce((sum, r) => sum + r.bytes, 0);
  const lines = [title, '', '| Objects | per stream | B/stream |', '|---|---:|---:|'];
  for (const r of rows.slice(0, top)) lines.push(`| \`${r.key.replace(/\|/g, '\\|')}\` | ${r.count.toFixed(2)} | ${r.bytes.toFixed(0)} |`);
  const rest = rows.slice(top).reduce((sum, r) => sum + r.bytes, 0);
  lines.push(`| (all others) | | ${rest.toFixed(0)} |`, `| **total** | | **${total.toFixed(0)}** |`, '');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Servers

interface Server {
  url: string;
  child: ChildProcess;
}

function startServer(script: string): Promise<Server> {
  const child = spawn(process.execPath, ['--expose-gc', '--no-flush-bytecode', '--import', 'tsx', path.join(ROOT, 'bench', 'servers', script)], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const ready = /^READY (\d+)$/m.exec(out);
      if (ready) resolve({ url: `http://127.0.0.1:${ready[1]}/`, child });
    });
    child.on('exit', (code) => reject(new Error(`${script} exited (code ${code}) before READY`)));
  });
}

async function control<T>(url: string, what: string): Promise<T> {
  const client = rpcClient(url, 1);
  try {
    const res = await client.post('{}', `/__bench/${what}`);
    if (res.status !== 200) throw new Error(`/__bench/${what} answered ${res.status}`);
    return JSON.parse(res.body) as T;
  } finally {
    client.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A heap snapshot once the server has no connection left but the one asking (at most 10 s). */
async function heapSnapshot(url: string, quiet: boolean): Promise<Map<string, Group>> {
  for (let i = 0; quiet && i < 100; i += 1) {
    if ((await control<MemorySnapshot>(url, 'memory')).connections === 0) break;
    await sleep(100);
  }
  const { file } = await control<{ file: string }>(url, 'heap-snapshot');
  try {
    return groups(file);
  } finally {
    rmSync(file, { force: true });
  }
}

async function profile(id: string, n: number, warmup: number, leftOnly: boolean): Promise<{ open: Row[]; left: Row[]; opened: number }> {
  const server = await startServer(SCRIPTS[id]);
  const streams = new IdleStreams(server.url);
  try {
    await streams.park(warmup);
    await streams.open();
    await streams.close();
    await control(server.url, 'clear-store');
    await streams.park(n);
    await streams.read();
    const before = await heapSnapshot(server.url, true);
    const { opened, failures } = await streams.open();
    if (failures > 0) process.stderr.write(`${id}: ${failures} streams failed to open\n`);
    const open = leftOnly ? before : await heapSnapshot(server.url, false);
    await streams.close();
    const closed = await heapSnapshot(server.url, true);
    return { open: diff(before, open, opened), left: diff(before, closed, opened), opened };
  } finally {
    await streams.close();
    server.child.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  const ids = arg('--servers', 'ours,ceiling').split(',');
  for (const id of ids) if (!SCRIPTS[id]) throw new Error(`--servers: unknown server ${id} (one of ${Object.keys(SCRIPTS).join(', ')})`);
  const n = Number(arg('--n', '2000'));
  const top = Number(arg('--top', '25'));
  const json = arg('--json', '');
  const leftOnly = process.argv.includes('--left-only');
  const results: Record<string, { open: Row[]; left: Row[]; opened: number }> = {};
  const out: string[] = [];
  for (const id of ids) {
    process.stderr.write(`${id}: ${n} idle streams…\n`);
    results[id] = await profile(id, n, Math.min(500, n), leftOnly);
    const r = results[id];
    if (!leftOnly) out.push(table(r.open, top, `## ${id}: heap per idle stream (N = ${r.opened})`));
    out.push(
      table(
        r.left.filter((row) => row.bytes > 0),
        Math.min(top, 10),
        `### ${id}: left after every client closed (largest growths)`,
      ),
    );
  }
  if (results.ours && results.ceiling && !leftOnly) {
    const ceiling = new Map(results.ceiling.open.map((r) => [r.key, r]));
    const extra = results.ours.open
      .map((r) => ({ key: r.key, count: r.count - (ceiling.get(r.key)?.count ?? 0), bytes: r.bytes - (ceiling.get(r.key)?.bytes ?? 0) }))
      .concat(
        results.ceiling.open.filter((r) => !results.ours.open.some((o) => o.key === r.key)).map((r) => ({ ...r, count: -r.count, bytes: -r.bytes })),
      )
      .sort((a, b) => b.bytes - a.bytes);
    out.push(table(extra, top, '## ours beyond ceiling (what a stream of ours holds that a bare Express response does not)'));
  }
  process.stdout.write(`${out.join('\n')}\n`);
  if (json) writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`idle-heap-profile: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
