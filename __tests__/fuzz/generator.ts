/**
 * The fuzz suite's request generator, shared by __tests__/fuzz/fuzz.test.ts and `npm run fuzz`.
 * Case `i` of seed `s` is a pure function of (s, i, the task pool), so one failing case can be
 * replayed alone. Bodies are built as a small JSON syntax tree so that they can hold what a JS object
 * cannot: duplicate keys, `__proto__` as a plain key, numbers JSON.parse rounds, 100,000 levels.
 */
import { deflateSync, gzipSync, brotliCompressSync } from 'node:zlib';

// ---------------------------------------------------------------------------
// Seeded randomness
// ---------------------------------------------------------------------------

/** mulberry32: a tiny, fast 32-bit PRNG; plenty for choosing mutations. */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** An integer in [min, max]. */
  range(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  /** Picks a key of `weights` with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    let roll = this.next() * entries.reduce((sum, [, w]) => sum + w, 0);
    for (const [key, weight] of entries) if ((roll -= weight) < 0) return key;
    return entries[entries.length - 1][0];
  }
}

/** The seed of case `index`: a 32-bit mix of the run's seed and the index (splitmix-style). */
export function caseSeed(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** FUZZ_SEED (decimal or 0x hex) when set, else a fresh random seed. */
export function seedFrom(value: string | undefined): number {
  if (value !== undefined && value.trim() !== '') {
    const seed = Number(value.trim());
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`FUZZ_SEED must be an integer in [0, 2^32), got ${value}`);
    return seed;
  }
  return Math.floor(Math.random() * 0x100000000);
}

// ---------------------------------------------------------------------------
// A JSON syntax tree that can say what JSON text can
// ---------------------------------------------------------------------------

/** An object as an ordered list of entries: keys may repeat and may be `__proto__`. */
export class Obj {
  constructor(public entries: [string, Json][] = []) {}
}
/** Text written as is: numbers such as 1e999 or 123456789012345678901, or invalid tokens. */
export class Raw {
  constructor(public readonly text: string) {}
}
/** `depth` nested containers around `leaf`, written without recursion. */
export class Deep {
  constructor(
    public readonly depth: number,
    public readonly shape: 'object' | 'array' | 'mixed',
    public readonly leaf: Json = 1,
  ) {}
}
export type Json = null | boolean | number | string | Raw | Deep | Obj | Json[];

/** Converts a plain value (templates are written as object literals) into the tree. */
export function tree(value: unknown): Json {
  if (value === null || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value;
  if (value instanceof Obj || value instanceof Raw || value instanceof Deep) return value;
  if (Array.isArray(value)) return value.map(tree);
  return new Obj(
    Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, tree(v)]),
  );
}

/** JSON text of `node`. The tree itself is shallow (deep values are Deep nodes), so recursion is fine. */
export function serialize(node: Json): string {
  if (node === null || typeof node === 'boolean') return String(node);
  if (typeof node === 'number') return Number.isFinite(node) ? JSON.stringify(node) : 'null';
  if (typeof node === 'string') return JSON.stringify(node);
  if (node instanceof Raw) return node.text;
  if (node instanceof Deep) {
    const leaf = serialize(node.leaf);
    if (node.shape === 'array') return '['.repeat(node.depth) + leaf + ']'.repeat(node.depth);
    if (node.shape === 'object') return '{"a":'.repeat(node.depth) + leaf + '}'.repeat(node.depth);
    const half = Math.floor(node.depth / 2);
    return '[{"k":'.repeat(half) + (node.depth % 2 ? `[${leaf}]` : leaf) + '}]'.repeat(half);
  }
  if (Array.isArray(node)) return `[${node.map(serialize).join(',')}]`;
  return `{${node.entries.map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(',')}}`;
}

// ---------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------

export const A2A_METHODS = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'GetExtendedAgentCard',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
] as const;
export type A2AMethod = (typeof A2A_METHODS)[number];

/** How often each method is the base of a case: the ones that reach the agent most. */
const METHOD_WEIGHTS: Readonly<Record<A2AMethod, number>> = {
  SendMessage: 30,
  SendStreamingMessage: 20,
  GetTask: 12,
  ListTasks: 10,
  CancelTask: 8,
  SubscribeToTask: 8,
  GetExtendedAgentCard: 3,
  CreateTaskPushNotificationConfig: 2,
  GetTaskPushNotificationConfig: 2,
  ListTaskPushNotificationConfigs: 2,
  DeleteTaskPushNotificationConfig: 2,
};

/** Method names that are not A2A v1.0 methods, several of them names every object has. */
const UNKNOWN_METHODS = [
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'sendMessage',
  'SENDMESSAGE',
  ' SendMessage',
  'SendMessage ',
  'SendMessage\u0000',
  'Send Message',
  'rpc.discover',
  'rpc.SendMessage',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  'isPrototypeOf',
  'then',
  'length',
  'Sendmessage',
  'GetTask/',
  '.',
  '*',
  'SendMessage\n',
  'ＳendMessage',
];

/** What the fuzz agent does for a message whose text is exactly this word (see harness.ts). */
export const AGENT_WORDS = ['complete', 'message', 'park', 'stream', 'echo', 'fail', 'throw', 'reject', 'auth'] as const;

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Values that would pollute a prototype if some code merged them naively. */
const pollutingValue = (rng: Rng): Json =>
  rng.pick<() => Json>([
    () => tree({ polluted: 'yes', isAdmin: true, toString: 'x' }),
    () => tree({ prototype: { polluted: 'yes' } }),
    () => tree({ __fuzz_polluted__: 1 }),
    () => new Obj([['__proto__', tree({ polluted: 'yes' })]]),
    () => 'polluted',
    () => null,
    () => [tree({ polluted: 'yes' })],
  ])();

const ODD_STRINGS = [
  '',
  ' ',
  '\t',
  '\u0000',
  '\u0000abc',
  'a\nb',
  '\r\n',
  '\u202Eevil',
  '😀',
  '\uFEFF',
  'é',
  'ﬀ',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  'NaN',
  '[object Object]',
  '{}',
  '<script>alert(1)</script>',
  "'; DROP TABLE tasks; --",
  '../../etc/passwd',
  '%00',
  '%s%s%s',
  '${x}',
  '\\',
  '"',
  'TASK_STATE_COMPLETED',
  'ROLE_AGENT',
  '__proto__',
];

/** String literals JSON.parse accepts but that are odd in JS (lone surrogates) or simply long. */
const ODD_STRING_TEXTS = ['"\\ud800"', '"\\udfff\\ud800"', '"\\u0000"', '"\\u005f\\u005fproto\\u005f\\u005f"', '"\\/"'];

const ODD_NUMBERS = [
  '1e999',
  '-1e999',
  '-0',
  '0.0',
  '1.5',
  '1E+2',
  '1e-400',
  '9007199254740993',
  '123456789012345678901234567890',
  '-9223372036854775809',
  '2147483648',
  '4294967296',
  '0.1',
  '-1',
  '1e21',
  '5e-324',
];

/** Unusual JSON-RPC ids: floats, huge integers, containers, booleans, long strings. */
const oddId = (rng: Rng): Json =>
  rng.pick<() => Json>([
    () => 1.5,
    () => -0.25,
    () => 0,
    () => -1,
    () => new Raw('1e21'),
    () => new Raw('123456789012345678901234567890'),
    () => new Raw('9007199254740993'),
    () => new Raw('1e999'),
    () => new Raw('-0'),
    () => 2 ** 53,
    () => '',
    () => ' ',
    () => 'x'.repeat(rng.range(1_000, 100_000)),
    () => rng.pick(ODD_STRINGS),
    () => null,
    () => true,
    () => false,
    () => tree({}),
    () => tree({ id: 1 }),
    () => [],
    () => [1],
    () => new Deep(rng.range(2, 5_000), 'array'),
    () => new Raw('"\\ud800"'),
    () => new Obj([['__proto__', 1]]),
  ])();

// ---------------------------------------------------------------------------
// Random values
// ---------------------------------------------------------------------------

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_ .,!?éß漢字😀';

export function randomString(rng: Rng, maxLength = 24): string {
  const chars = [...ALPHABET];
  let out = '';
  for (let i = rng.int(maxLength + 1); i > 0; i--) out += rng.pick(chars);
  return out;
}

/** A string of `length` UTF-16 units (mostly ASCII, some multi-byte). */
export function hugeString(rng: Rng, length: number): string {
  const unit = randomString(rng, 64) || 'x';
  return unit
    .repeat(Math.ceil(length / unit.length))
    .slice(0, length)
    .replace(/[\ud800-\udbff]$/, 'x');
}

/** Any JSON value, nested at most `depth` levels. */
export function randomValue(rng: Rng, depth = 3): Json {
  const kind = depth <= 0 ? rng.int(5) : rng.int(8);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.chance(0.5) ? rng.range(-1_000, 1_000) : new Raw(rng.pick(ODD_NUMBERS));
    case 3:
      return rng.chance(0.7) ? randomString(rng) : rng.pick(ODD_STRINGS);
    case 4:
      return rng.chance(0.8) ? randomString(rng, 8) : new Raw(rng.pick(ODD_STRING_TEXTS));
    case 5:
    case 6: {
      const obj = new Obj();
      for (let i = rng.int(4); i > 0; i--)
        obj.entries.push([rng.chance(0.15) ? rng.pick(PROTO_KEYS) : randomString(rng, 10), randomValue(rng, depth - 1)]);
      return obj;
    }
    default: {
      const list: Json[] = [];
      for (let i = rng.int(4); i > 0; i--) list.push(randomValue(rng, depth - 1));
      return list;
    }
  }
}

/** A value of a different JSON type than `node` (for "wrong type" mutations). */
function otherType(rng: Rng, node: Json): Json {
  const type = (n: Json) => (n === null ? 'null' : Array.isArray(n) ? 'array' : n instanceof Obj ? 'object' : n instanceof Raw ? 'raw' : typeof n);
  for (let tries = 0; tries < 8; tries++) {
    const value = randomValue(rng, 2);
    if (type(value) !== type(node)) return value;
  }
  return node === null ? 0 : null;
}

// ---------------------------------------------------------------------------
// Valid requests, per method
// ---------------------------------------------------------------------------

/** Tasks that exist when the run starts (created by the harness before the first case). */
export interface TaskPool {
  /** Tasks parked in TASK_STATE_INPUT_REQUIRED (the run may complete or cancel them). */
  readonly parked: readonly string[];
  /** Tasks in a terminal state. */
  readonly finished: readonly string[];
  /** Context ids of those tasks. */
  readonly contextIds: readonly string[];
}

const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
];
const MEDIA_TYPES = ['text/plain', 'application/json', 'image/png', 'application/octet-stream', 'text/*', '', 'nonsense'];

const fuzzId = (rng: Rng) => `fz-${rng.int(1e9).toString(36)}-${rng.int(1e9).toString(36)}`;

function taskId(rng: Rng, pool: TaskPool): string {
  const roll = rng.int(10);
  if (roll < 4 && pool.parked.length) return rng.pick(pool.parked);
  if (roll < 7 && pool.finished.length) return rng.pick(pool.finished);
  return rng.chance(0.5) ? fuzzId(rng) : rng.pick(ODD_STRINGS.filter((s) => s !== ''));
}

function part(rng: Rng, text: string): Record<string, unknown> {
  const roll = rng.int(10);
  const extra = rng.chance(0.2) ? { mediaType: rng.pick(MEDIA_TYPES) } : {};
  const metadata = rng.chance(0.15) ? { metadata: { k: randomValue(rng, 2) } } : {};
  if (roll < 6) return { text, ...extra, ...metadata };
  if (roll < 8) return { data: randomValue(rng, 4), ...extra, ...metadata };
  if (roll < 9) return { raw: Buffer.from(randomString(rng, 30)).toString(rng.chance(0.5) ? 'base64' : 'base64url'), filename: 'f.bin', ...extra };
  return { url: `https://example.com/${fuzzId(rng)}`, ...extra };
}

function message(rng: Rng, pool: TaskPool): Record<string, unknown> {
  const word = rng.pick(AGENT_WORDS);
  const parts = [part(rng, word)];
  // Additional parts never carry text, so the agent still reads `word`.
  for (let i = rng.chance(0.2) ? rng.range(1, 3) : 0; i > 0; i--) parts.push({ data: randomValue(rng, 3) });
  const continues = rng.chance(0.3);
  return {
    messageId: rng.chance(0.9) ? fuzzId(rng) : rng.pick(['m-1', 'dup', fuzzId(rng)]),
    role: 'ROLE_USER',
    parts,
    ...(continues ? { taskId: taskId(rng, pool) } : {}),
    // A contextId with a taskId must match the task's; only new tasks get one.
    ...(!continues && rng.chance(0.2) ? { contextId: rng.chance(0.5) && pool.contextIds.length ? rng.pick(pool.contextIds) : fuzzId(rng) } : {}),
    ...(rng.chance(0.15) ? { metadata: { trace: randomString(rng), nested: randomValue(rng, 3) } } : {}),
    ...(rng.chance(0.05) ? { extensions: ['https://example.com/ext/v1'] } : {}),
    ...(rng.chance(0.05) ? { referenceTaskIds: [taskId(rng, pool)] } : {}),
  };
}

/**
 * Webhook URLs: the first is the one the harness allow-lists (resolved to loopback by its own
 * lookup, nothing listening); the others must be refused without any DNS query or connection.
 */
export const FUZZ_WEBHOOKS = ['http://hooks.fuzz.test/hook', 'https://example.com/hook', 'http://127.0.0.1:9/hook', 'http://[::1]/x'];

/** Valid params of `method`. */
export function validParams(rng: Rng, method: A2AMethod, pool: TaskPool): Record<string, unknown> | undefined {
  switch (method) {
    case 'SendMessage':
    case 'SendStreamingMessage':
      return {
        message: message(rng, pool),
        ...(rng.chance(0.3)
          ? {
              configuration: {
                ...(rng.chance(0.5) ? { returnImmediately: rng.chance(0.5) } : {}),
                ...(rng.chance(0.5) ? { historyLength: rng.int(5) } : {}),
                ...(rng.chance(0.3) ? { acceptedOutputModes: ['text/plain'] } : {}),
                ...(rng.chance(0.1) ? { taskPushNotificationConfig: { url: rng.pick(FUZZ_WEBHOOKS) } } : {}),
              },
            }
          : {}),
        ...(rng.chance(0.1) ? { metadata: { k: randomValue(rng, 2) } } : {}),
      };
    case 'GetTask':
      return { id: taskId(rng, pool), ...(rng.chance(0.3) ? { historyLength: rng.int(4) } : {}) };
    case 'ListTasks':
      return {
        ...(rng.chance(0.3) ? { pageSize: rng.range(1, 100) } : {}),
        ...(rng.chance(0.2) && pool.contextIds.length ? { contextId: rng.pick(pool.contextIds) } : {}),
        ...(rng.chance(0.2) ? { status: rng.pick(TASK_STATES) } : {}),
        ...(rng.chance(0.1) ? { pageToken: rng.pick(['', 'abc', Buffer.from('["", "x"]').toString('base64url')]) } : {}),
        ...(rng.chance(0.2) ? { historyLength: rng.int(3) } : {}),
        ...(rng.chance(0.1) ? { statusTimestampAfter: '2020-01-01T00:00:00Z' } : {}),
        ...(rng.chance(0.2) ? { includeArtifacts: rng.chance(0.5) } : {}),
      };
    case 'CancelTask':
      return { id: taskId(rng, pool), ...(rng.chance(0.2) ? { metadata: { reason: randomString(rng) } } : {}) };
    case 'SubscribeToTask':
      return { id: taskId(rng, pool) };
    case 'GetExtendedAgentCard':
      return rng.chance(0.5) ? undefined : {};
    case 'CreateTaskPushNotificationConfig':
      return {
        taskId: taskId(rng, pool),
        url: rng.pick(FUZZ_WEBHOOKS),
        ...(rng.chance(0.5) ? { token: randomString(rng) } : {}),
        ...(rng.chance(0.3) ? { authentication: { scheme: 'Bearer', credentials: randomString(rng) } } : {}),
      };
    case 'GetTaskPushNotificationConfig':
    case 'DeleteTaskPushNotificationConfig':
      return { taskId: taskId(rng, pool), id: fuzzId(rng) };
    case 'ListTaskPushNotificationConfigs':
      return { taskId: taskId(rng, pool), ...(rng.chance(0.3) ? { pageSize: rng.int(10) } : {}) };
  }
}

// ---------------------------------------------------------------------------
// Mutations of the tree
// ---------------------------------------------------------------------------

type Slot = { get: () => Json; set: (value: Json) => void; container: Obj | Json[]; key: string | number };

/** Every value position under `root` (not `root` itself), Deep and Raw nodes being leaves. */
function slots(root: Json): Slot[] {
  const out: Slot[] = [];
  const visit = (node: Json): void => {
    if (node instanceof Obj) {
      for (const entry of node.entries) {
        out.push({ get: () => entry[1], set: (v) => void (entry[1] = v), container: node, key: entry[0] });
        visit(entry[1]);
      }
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => {
        out.push({ get: () => node[i], set: (v) => void (node[i] = v), container: node, key: i });
        visit(item);
      });
    }
  };
  visit(root);
  return out;
}

/** Every object under (and including) `root`. */
function objects(root: Json): Obj[] {
  const out: Obj[] = root instanceof Obj ? [root] : [];
  for (const slot of slots(root)) {
    const value = slot.get();
    if (value instanceof Obj) out.push(value);
  }
  return out;
}

export const MUTATIONS = [
  'delete',
  'retype',
  'null',
  'proto-key',
  'proto-rename',
  'duplicate-key',
  'deep',
  'huge-string',
  'odd-string',
  'odd-number',
  'wrap-array',
  'empty',
  'random-key',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

/** Applies one random mutation somewhere under `root` (which stays in place); returns its name. */
export function mutate(rng: Rng, root: Json): Mutation {
  const mutation = rng.pick(MUTATIONS);
  const all = slots(root);
  const containers = objects(root);
  const slot = all.length ? rng.pick(all) : undefined;
  const obj = containers.length ? rng.pick(containers) : undefined;
  switch (mutation) {
    case 'delete':
      if (slot) {
        if (slot.container instanceof Obj) slot.container.entries = slot.container.entries.filter((e) => e[0] !== slot.key);
        else slot.container.splice(slot.key as number, 1);
      }
      break;
    case 'retype':
      slot?.set(otherType(rng, slot.get()));
      break;
    case 'null':
      slot?.set(null);
      break;
    case 'proto-key':
      obj?.entries.splice(rng.int(obj.entries.length + 1), 0, [rng.pick(PROTO_KEYS), pollutingValue(rng)]);
      break;
    case 'proto-rename':
      if (obj?.entries.length) rng.pick(obj.entries)[0] = rng.pick(PROTO_KEYS);
      break;
    case 'duplicate-key':
      if (obj?.entries.length) {
        const [key, value] = rng.pick(obj.entries);
        // Before or after the original: JSON.parse keeps the last one.
        obj.entries.splice(rng.int(obj.entries.length + 1), 0, [key, rng.chance(0.5) ? otherType(rng, value) : value]);
      }
      break;
    case 'deep':
      slot?.set(
        new Deep(
          rng.pick([2, 10, 63, 64, 65, 66, 100, 1_000, 5_000, 20_000, 100_000]),
          rng.pick(['object', 'array', 'mixed'] as const),
          rng.chance(0.5) ? 1 : randomString(rng),
        ),
      );
      break;
    case 'huge-string':
      slot?.set(hugeString(rng, rng.pick([1_000, 10_000, 100_000, 400_000])));
      break;
    case 'odd-string':
      slot?.set(rng.chance(0.7) ? rng.pick(ODD_STRINGS) : new Raw(rng.pick(ODD_STRING_TEXTS)));
      break;
    case 'odd-number':
      slot?.set(new Raw(rng.pick(ODD_NUMBERS)));
      break;
    case 'wrap-array':
      slot?.set([slot.get()]);
      break;
    case 'empty':
      slot?.set(rng.chance(0.5) ? new Obj() : []);
      break;
    case 'random-key':
      obj?.entries.push([rng.chance(0.5) ? randomString(rng, 12) : 'x'.repeat(rng.range(100, 20_000)), randomValue(rng, 2)]);
      break;
  }
  return mutation;
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

export const FAMILIES = {
  /** A well-formed request, to exercise the agent, tasks and streams. */
  valid: 14,
  /** Mutations inside params (wrong types, missing fields, prototype and duplicate keys, ...). */
  params: 34,
  /** Mutations anywhere in the envelope. */
  envelope: 12,
  /** An odd JSON-RPC id on an otherwise valid request. */
  id: 8,
  /** Text that is not a request: invalid JSON, scalars, truncated, BOM, UTF-16, junk bytes. */
  raw: 10,
  /** Arrays of requests. */
  batch: 5,
  /** Nesting beyond any sane depth, in params or as the whole body. */
  deep: 8,
  /** Strings near the body limit, and bodies just over it. */
  huge: 4,
  /** Every method name, known or not, with empty or random params. */
  methods: 5,
} as const;
export type Family = keyof typeof FAMILIES;

/** One HTTP request of the run, and what the checker may expect of its reply. */
export interface FuzzCase {
  readonly index: number;
  readonly family: Family;
  /** Short human description (family, method, mutations, transport), for failure reports. */
  readonly label: string;
  /** Which server of the harness. */
  readonly target: Target;
  /** Path and query below the server's root. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** Send with Transfer-Encoding: chunked instead of Content-Length. */
  readonly chunked: boolean;
  /** The id the reply must carry, when the envelope and transport were left valid. */
  readonly echoId?: string | number | null;
  /** The method named in the envelope, when the envelope was left valid (for result checks). */
  readonly method?: string;
}

/** Body limit of the harness's routers (the default). */
export const BODY_LIMIT = 1024 * 1024;

const TRANSPORTS = {
  standard: 70,
  contentType: 8,
  charset: 4,
  encoding: 8,
  bom: 2,
  chunked: 4,
  version: 6,
  headers: 4,
} as const;

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/a2a+json',
  'application/vnd.api+json',
  'APPLICATION/JSON',
  'application/json, text/plain',
  'application/jsonx',
  'application/json;',
  'application/json; boundary=x',
  'text/json',
  '*/*',
  'application',
  '',
];
const CHARSETS = ['latin1', 'iso-8859-1', 'utf-16', 'utf-16le', 'UTF-8', 'utf8', '"utf-8"', 'us-ascii', 'koi8-r', 'nonsense'];
const VERSIONS = [undefined, '', '0.3', '1.0.1', '1.1', '1', '2.0', 'v1.0', ' 1.0', '1.0, 1.0', 'abc', '1.0'.repeat(1000)];

/** The two servers of the harness: the bare router, and the router behind the middleware preset. */
export type Target = 'router' | 'stack';

/** Requests to the stack mostly carry this key: one fixed caller, so the pool's tasks are visible. */
export const STACK_KEY_HEADER = 'x-fuzz-key';
export const STACK_KEY = 'fuzz-key';

/** Builds case `index` of run `seed`, with the task pools of both servers. */
export function generateCase(seed: number, index: number, pools: Readonly<Record<Target, TaskPool>>): FuzzCase {
  const rng = new Rng(caseSeed(seed, index));
  const target: Target = rng.chance(0.3) ? 'stack' : 'router';
  const pool = pools[target];
  const family = rng.weighted(FAMILIES);
  const notes: string[] = [family];
  const method: string = family === 'methods' ? (rng.chance(0.5) ? rng.pick(A2A_METHODS) : rng.pick(UNKNOWN_METHODS)) : rng.weighted(METHOD_WEIGHTS);
  const knownMethod = (A2A_METHODS as readonly string[]).includes(method) ? (method as A2AMethod) : undefined;
  const params = knownMethod ? validParams(rng, knownMethod, pool) : rng.chance(0.5) ? {} : undefined;
  const id: number | string = rng.chance(0.5) ? rng.range(0, 1e6) : fuzzId(rng);
  const envelope = tree({ jsonrpc: '2.0', id, method, params }) as Obj;
  const paramsNode = () => envelope.entries.find((e) => e[0] === 'params')?.[1];
  const setParams = (value: Json) => {
    envelope.entries = envelope.entries.filter((e) => e[0] !== 'params');
    envelope.entries.push(['params', value]);
  };
  notes.push(method);

  let body: string | Buffer;
  let envelopeIntact = true;
  let oddIdEcho: string | number | null | undefined;
  switch (family) {
    case 'valid':
    case 'methods':
      if (family === 'methods' && rng.chance(0.3)) setParams(randomValue(rng, 2));
      body = serialize(envelope);
      break;
    case 'params': {
      let target = paramsNode();
      if (!(target instanceof Obj)) setParams((target = new Obj()));
      for (let i = rng.range(1, 3); i > 0; i--) notes.push(mutate(rng, target));
      body = serialize(envelope);
      break;
    }
    case 'envelope':
      for (let i = rng.range(1, 3); i > 0; i--) notes.push(mutate(rng, envelope));
      if (rng.chance(0.2)) {
        envelope.entries.push([rng.pick(PROTO_KEYS), pollutingValue(rng)]);
        notes.push('proto-top');
      }
      body = serialize(envelope);
      envelopeIntact = false;
      break;
    case 'id': {
      const odd = oddId(rng);
      envelope.entries[1][1] = odd;
      body = serialize(envelope);
      notes.push(`id=${serialize(odd).slice(0, 20)}`);
      // Echoed exactly when it is a string, a finite number or null; answered with null otherwise.
      const parsed: unknown = JSON.parse(serialize(odd));
      oddIdEcho = typeof parsed === 'string' || (typeof parsed === 'number' && Number.isFinite(parsed)) ? parsed : null;
      envelopeIntact = false;
      break;
    }
    case 'raw': {
      const raw = rawBody(rng, envelope);
      body = raw.body;
      notes.push(raw.note);
      envelopeIntact = false;
      break;
    }
    case 'batch': {
      const items: Json[] = [];
      for (let i = rng.int(6); i > 0; i--)
        items.push(rng.chance(0.7) ? tree({ jsonrpc: '2.0', id: i, method: rng.pick(A2A_METHODS), params: {} }) : randomValue(rng, 2));
      body = rng.chance(0.1) ? `[${serialize(envelope)},`.repeat(200) + '1' + ']'.repeat(200) : serialize(items);
      envelopeIntact = false;
      break;
    }
    case 'deep': {
      const roll = rng.int(4);
      const depth = rng.pick([65, 1_000, 10_000, 100_000, 400_000]);
      const shape = rng.pick(['object', 'array', 'mixed'] as const);
      notes.push(`depth=${depth}`, shape);
      if (roll === 0) {
        // The whole body, not even an envelope.
        body = serialize(new Deep(depth, shape));
        envelopeIntact = false;
      } else if (roll === 1) {
        // An unclosed one: invalid JSON that is expensive to reject.
        body = serialize(new Deep(depth, shape)).slice(0, -1);
        envelopeIntact = false;
      } else {
        const target = paramsNode();
        const all = target === undefined ? [] : slots(target);
        if (all.length) rng.pick(all).set(new Deep(depth, shape));
        else setParams(tree({ metadata: new Deep(depth, shape) }));
        body = serialize(envelope);
      }
      break;
    }
    case 'huge': {
      const over = rng.chance(0.35);
      // ~ the body limit, less or more the envelope around the string.
      const size = over ? BODY_LIMIT + rng.range(1, 64 * 1024) : rng.range(100_000, BODY_LIMIT - 4_096);
      const text = hugeString(rng, Math.floor(size * (rng.chance(0.3) ? 0.45 : 0.98)));
      const placement = rng.int(4);
      if (placement === 0)
        envelope.entries[1][1] = text; // the id
      else if (placement === 1)
        envelope.entries[2][1] = text; // the method
      else {
        envelope.entries[2][1] = 'SendMessage';
        setParams(tree({ message: { messageId: fuzzId(rng), role: 'ROLE_USER', parts: [{ text }] } }));
      }
      body = serialize(envelope);
      const bytes = Buffer.byteLength(body);
      notes.push(bytes > BODY_LIMIT ? 'over-limit' : 'under-limit', `bytes=${bytes}`);
      envelopeIntact = false;
      break;
    }
  }

  let bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  // A body over the limit is answered 413 before its id can be read.
  if (bytes.length > BODY_LIMIT) envelopeIntact = false;
  const sent = transportOf(rng, target, bytes);
  bytes = sent.bytes;
  const { transport, headers, chunked, path } = sent;
  notes.push(...sent.notes);

  const label = notes.filter(Boolean).join(' ');
  // Transports that leave the body readable as sent (a middleware may still answer first, id null).
  const readable = transport === 'standard' || transport === 'chunked' || transport === 'bom' || transport === 'headers' || transport === 'version';
  const echoId = !readable || bytes.length > BODY_LIMIT ? undefined : envelopeIntact ? id : oddIdEcho;
  return {
    index,
    family,
    label,
    target,
    path,
    headers,
    body: bytes,
    chunked,
    ...(echoId !== undefined ? { echoId } : {}),
    ...(envelopeIntact ? { method } : {}),
  };
}

/** How a body goes on the wire: the usual JSON POST, or an odd content type, charset, encoding, framing or header. */
function transportOf(rng: Rng, target: Target, body: Buffer) {
  const notes: string[] = [];
  let bytes = body;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'a2a-version': '1.0' };
  if (target === 'stack' && rng.chance(0.9)) headers[STACK_KEY_HEADER] = STACK_KEY;
  let chunked = false;
  let path = '/agent';
  const transport = rng.weighted(TRANSPORTS);
  if (transport !== 'standard') notes.push(`transport=${transport}`);
  switch (transport) {
    case 'contentType': {
      const type = rng.pick(CONTENT_TYPES);
      if (type === '' && rng.chance(0.5)) delete headers['content-type'];
      else headers['content-type'] = type;
      notes.push(`ct=${type}`);
      break;
    }
    case 'charset': {
      const charset = rng.pick(CHARSETS);
      headers['content-type'] = `application/json; charset=${charset}`;
      if (/^utf-16/.test(charset) && rng.chance(0.5)) bytes = Buffer.from(bytes.toString('utf8'), 'utf16le');
      if (charset === 'latin1' && rng.chance(0.5)) bytes = Buffer.from(bytes.toString('utf8'), 'latin1');
      notes.push(`charset=${charset}`);
      break;
    }
    case 'encoding': {
      const encoding = rng.pick([
        'gzip',
        'gzip',
        'deflate',
        'br',
        'identity',
        'gzip-garbage',
        'gzip-bomb',
        'compress',
        'foo',
        'gzip, gzip',
        'GZIP',
        'x-gzip',
      ]);
      notes.push(`ce=${encoding}`);
      if (encoding === 'gzip' || encoding === 'GZIP' || encoding === 'x-gzip') bytes = gzipSync(bytes);
      else if (encoding === 'deflate') bytes = deflateSync(bytes);
      else if (encoding === 'br') bytes = brotliCompressSync(bytes);
      else if (encoding === 'gzip, gzip') bytes = gzipSync(gzipSync(bytes));
      else if (encoding === 'gzip-garbage') bytes = Buffer.concat([gzipSync(bytes).subarray(0, 12), Buffer.from('garbage')]);
      // 4 MB of spaces compress to ~4 KB: the limit applies to the inflated size.
      else if (encoding === 'gzip-bomb') bytes = gzipSync(Buffer.concat([Buffer.alloc(4 * 1024 * 1024, 0x20), bytes]));
      headers['content-encoding'] = encoding.replace(/-garbage|-bomb/, '');
      break;
    }
    case 'bom':
      bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
      break;
    case 'chunked':
      chunked = true;
      break;
    case 'version': {
      const version = rng.pick(VERSIONS);
      if (version === undefined) delete headers['a2a-version'];
      else if (rng.chance(0.3)) {
        delete headers['a2a-version'];
        path = `/agent?A2A-Version=${encodeURIComponent(version)}`;
      } else headers['a2a-version'] = version;
      notes.push(`version=${String(version).slice(0, 12)}`);
      break;
    }
    case 'headers': {
      const extra = rng.pick([
        { accept: 'text/event-stream' },
        { accept: 'application/json' },
        { accept: 'image/png' },
        { 'a2a-extensions': 'https://example.com/ext/v1, ,,' + 'x'.repeat(5_000) },
        { 'a2a-extensions': '__proto__' },
        { 'x-http-method-override': 'GET' },
        { 'content-length-extra': '1' },
        { 'x-a2a-extensions': 'a,b' },
        { authorization: 'Bearer ' + 'x'.repeat(100) },
        { authorization: 'Basic Og==' },
        { 'x-request-id': '../../' + 'x'.repeat(300) },
        { traceparent: '00-' + '0'.repeat(32) + '-' + '0'.repeat(16) + '-01' },
        { traceparent: 'garbage' },
        { expect: '100-continue' },
        { 'x-tenant-id': rng.pick(['t1', '', '../t', 'x'.repeat(200), '__proto__', 'T 1']) },
        { [STACK_KEY_HEADER]: 'wrong-key' },
      ]);
      Object.assign(headers, extra);
      notes.push(`h=${Object.keys(extra)[0]}`);
      break;
    }
  }

  return { transport, headers, bytes, chunked, path, notes };
}

/** A body that is not a single well-formed request. */
function rawBody(rng: Rng, envelope: Obj): { body: string | Buffer; note: string } {
  const text = serialize(envelope);
  const forms: [string, () => string | Buffer][] = [
    ['empty', () => ''],
    ['spaces', () => '   \n\t '],
    ['scalar', () => rng.pick(['null', '42', '"SendMessage"', 'true', 'false', '-0', '1e999', '{}', '[]', '""'])],
    ['truncated', () => text.slice(0, rng.int(text.length))],
    ['trailing', () => text + rng.pick(['x', '}', ',{}', ' {}', '\u0000', ' ', '\n'])],
    ['two', () => text + text],
    [
      'js-not-json',
      () =>
        rng.pick([
          "{'jsonrpc':'2.0'}",
          '{jsonrpc:"2.0"}',
          '{"a":NaN}',
          '{"a":Infinity}',
          '{"a":undefined}',
          '/* c */{}',
          '{"a":1,}',
          '[1,]',
          '{"a":01}',
          '{"a":.5}',
          '{"a":0x10}',
        ]),
    ],
    ['junk-bytes', () => Buffer.from(Array.from({ length: rng.range(1, 200) }, () => rng.int(256)))],
    ['invalid-utf8', () => Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('}')])],
    ['escaped-keys', () => text.replace('"jsonrpc"', '"\\u006asonrpc"').replace('"method"', '"m\\u0065thod"')],
    [
      'duplicate-envelope-keys',
      () =>
        text.slice(0, -1) +
        rng.pick([
          ',"method":"SendMessage"',
          ',"id":{}',
          ',"jsonrpc":"1.0"',
          ',"params":[]',
          ',"id":null',
          ',"params":{"__proto__":{"polluted":1}}',
        ]) +
        '}',
    ],
    ['bom-utf16', () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])],
    ['nul-padded', () => text + '\u0000'.repeat(rng.range(1, 100))],
    ['lone-surrogate-key', () => text.slice(0, -1) + ',"\\ud800":1}'],
  ];
  const [note, make] = rng.pick(forms);
  return { body: make(), note };
}
