/**
 * The fuzz suite's own tools: the generator is deterministic and covers what it claims, and the
 * checks catch the failures they exist for (a fuzz run that passes proves nothing otherwise).
 */
import { Deep, FAMILIES, Obj, Raw, Rng, caseSeed, generateCase, seedFrom, serialize, tree, type FuzzCase, type TaskPool } from './generator';
import { checkReply, prototypeChanges, prototypeSnapshot, type Reply } from './harness';

const pool: TaskPool = { parked: ['t-parked'], finished: ['t-done'], contextIds: ['c-1'] };
const pools = { router: pool, stack: pool };

describe('generator', () => {
  it('builds the same bytes for the same seed and index, other bytes for another seed', () => {
    for (let i = 0; i < 50; i++) {
      const a = generateCase(42, i, pools);
      const b = generateCase(42, i, pools);
      expect(b.body.equals(a.body)).toBe(true);
      expect(b.headers).toEqual(a.headers);
    }
    const differing = Array.from({ length: 50 }, (_, i) => !generateCase(1, i, pools).body.equals(generateCase(2, i, pools).body));
    expect(differing.filter(Boolean).length).toBeGreaterThan(45);
  });

  it('covers every family, prototype keys, duplicate keys, deep nesting, odd ids, batches and encodings in 2,000 cases', () => {
    const cases = Array.from({ length: 2_000 }, (_, i) => generateCase(7, i, pools));
    const families = new Set(cases.map((c) => c.family));
    expect([...families].sort()).toEqual(Object.keys(FAMILIES).sort());
    const text = (c: FuzzCase) => c.body.toString('latin1');
    const count = (predicate: (c: FuzzCase) => boolean) => cases.filter(predicate).length;
    expect(count((c) => text(c).includes('"__proto__":'))).toBeGreaterThan(20);
    expect(count((c) => text(c).includes('"constructor":'))).toBeGreaterThan(20);
    expect(count((c) => text(c).includes('"prototype":'))).toBeGreaterThan(20);
    expect(count((c) => c.label.includes('duplicate-key'))).toBeGreaterThan(20);
    expect(count((c) => text(c).includes('['.repeat(1_000)) || text(c).includes('{"a":'.repeat(1_000)))).toBeGreaterThan(20);
    expect(count((c) => c.family === 'id')).toBeGreaterThan(50);
    expect(count((c) => c.body[0] === 0x5b /* [ */)).toBeGreaterThan(50);
    expect(count((c) => c.headers['content-encoding'] === 'gzip')).toBeGreaterThan(5);
    expect(count((c) => c.body.length > 1024 * 1024)).toBeGreaterThan(5);
    expect(count((c) => c.chunked)).toBeGreaterThan(20);
    expect(count((c) => c.target === 'stack')).toBeGreaterThan(400);
  });

  it('writes what a JS object cannot hold: repeated keys, a __proto__ key, raw numbers, 100,000 levels', () => {
    expect(
      serialize(
        new Obj([
          ['a', 1],
          ['a', 2],
          ['__proto__', tree({ x: 1 })],
        ]),
      ),
    ).toBe('{"a":1,"a":2,"__proto__":{"x":1}}');
    expect(serialize(tree({ a: new Raw('1e999'), b: new Raw('123456789012345678901') }))).toBe('{"a":1e999,"b":123456789012345678901}');
    const deep = serialize(new Deep(100_000, 'mixed'));
    expect(deep.split('[').length - 1 + deep.split('{').length - 1).toBe(100_000);
    expect(() => JSON.parse(deep)).not.toThrow();
  });

  it('mixes case seeds and reads FUZZ_SEED', () => {
    expect(caseSeed(1, 0)).not.toBe(caseSeed(1, 1));
    expect(caseSeed(1, 0)).not.toBe(caseSeed(2, 0));
    const rng = new Rng(3);
    expect(Array.from({ length: 5 }, () => rng.int(10))).toEqual(
      Array.from(
        { length: 5 },
        (
          (r) => () =>
            r.int(10)
        )(new Rng(3)),
      ),
    );
    expect(seedFrom('12345')).toBe(12345);
    expect(seedFrom('0xff')).toBe(255);
    expect(() => seedFrom('-1')).toThrow(/FUZZ_SEED/);
    expect(seedFrom(undefined)).toBeGreaterThanOrEqual(0);
  });
});

describe('checks', () => {
  const c: FuzzCase = {
    index: 0,
    family: 'valid',
    label: 'valid',
    target: 'router',
    path: '/agent',
    headers: {},
    body: Buffer.from('{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"x"}}'),
    chunked: false,
    echoId: 7,
    method: 'GetTask',
  };
  const json = (body: unknown, status = 200, contentType = 'application/json; charset=utf-8'): Reply => ({
    status,
    rawHeaders: `Content-Type\n${contentType}`,
    contentType,
    body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
    cut: false,
  });
  const error = (code: number, extra: object = {}) => ({ jsonrpc: '2.0', id: 7, error: { code, message: 'x', ...extra } });

  it('accepts a spec error with the request id, and a result that parses', () => {
    expect(checkReply(c, json(error(-32001)))).toEqual([]);
    const task = { id: 'x', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } };
    expect(checkReply(c, json({ jsonrpc: '2.0', id: 7, result: task }))).toEqual([]);
    // A middleware answers before the id is read.
    expect(checkReply(c, json({ ...error(-32600), id: null }, 413))).toEqual([]);
  });

  it.each([
    ['a 5xx', json(error(-32603), 500), /HTTP 500/],
    ['an HTML page', json('<!DOCTYPE html><pre>Cannot GET</pre>', 404, 'text/html'), /content type/],
    ['a code outside the table', json(error(-32000)), /not in the spec's table/],
    ['an internal error', json(error(-32603)), /internal error/],
    ['another id', json({ ...error(-32001), id: 8 }), /instead of 7/],
    ['no id', json({ jsonrpc: '2.0', error: { code: -32001, message: 'x' } }), /no id member/],
    ['both result and error', json({ ...error(-32001), result: {} }), /exactly one of/],
    ['a batch reply', json([error(-32001)]), /not a JSON-RPC object/],
    ['a stack trace', json(error(-32001, { message: 'x\n    at foo (/work/main/lib/a.ts:1:2)' })), /"\/work"/],
    ['an Error: text', json(error(-32001, { message: 'TypeError: boom' })), /"Error:"/],
    ['a path in a header', { ...json(error(-32001)), rawHeaders: 'X-Debug\n/app/node_modules/x' }, /node_modules/],
    ['a result that does not parse', json({ jsonrpc: '2.0', id: 7, result: { id: 'x' } }), /does not match the schema/],
    ['a reset', { ...json(''), transportError: 'response: ECONNRESET' }, /no reply/],
    ['an unparsable body', json('{"jsonrpc":'), /not JSON/],
  ])('catches %s', (_name, reply, problem) => {
    expect(checkReply(c, reply).join('\n')).toMatch(problem);
  });

  it('reads SSE streams frame by frame', () => {
    const stream = (text: string): Reply => ({ status: 200, rawHeaders: '', contentType: 'text/event-stream', body: Buffer.from(text), cut: false });
    const task = { task: { id: 'x', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } };
    expect(checkReply(c, stream(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 7, result: task })}\n\n: ping\n\n`))).toEqual([]);
    expect(checkReply(c, stream(`event: error\ndata: ${JSON.stringify(error(-32004))}\n\n`))).toEqual([]);
    expect(checkReply(c, stream('data: {not json}\n\n')).join()).toMatch(/not JSON/);
    expect(checkReply(c, stream(': ping\n\n')).join()).toMatch(/without any event/);
    expect(checkReply(c, stream(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 7, result: { bogus: 1 } })}\n\n`)).join()).toMatch(/schema/);
    expect(checkReply(c, stream(`data: ${JSON.stringify(error(-32004))}\n`)).join()).toMatch(/mid-frame/);
  });

  it('notices a key added to a built-in prototype', () => {
    const before = prototypeSnapshot();
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = 'yes';
    try {
      expect(prototypeChanges(before)).toEqual(expect.arrayContaining(['Object.prototype.polluted added', '({}).polluted is yes']));
    } finally {
      delete proto.polluted;
    }
    expect(prototypeChanges(before)).toEqual([]);
  });
});
