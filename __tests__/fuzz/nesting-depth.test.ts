/**
 * Free-form JSON fields (Struct: every `metadata`; Value: `Part.data`) nest at most MAX_JSON_DEPTH
 * levels: deeper ones are refused at validation (-32602 naming the field) before the agent runs,
 * instead of overflowing the stack when the store serializes the task (-32603). Bodies nested far
 * deeper still, valid envelopes or not, cannot crash anything.
 */
import { MAX_JSON_DEPTH, exceedsJsonDepth, type AgentExecutor } from '../../lib';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc } from '../helpers/http';

let executions = 0;
const executor: AgentExecutor = {
  async execute(ctx, events) {
    executions++;
    await events.start();
    // Back through the store and the wire, so an accepted depth is also a depth we can serialize.
    await events.artifact({ parts: ctx.userMessage.parts, metadata: { echoed: ctx.userMessage.metadata ?? null } });
    await events.complete();
  },
};

const objects = (levels: number, leaf = '1') => '{"a":'.repeat(levels) + leaf + '}'.repeat(levels);
const arrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const send = (params: string, method = 'SendMessage', id = '"d"') => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;
const message = (extra: string) => `{"message":{"messageId":"m-${Math.random()}","role":"ROLE_USER","parts":[{"text":"hi"}]${extra}}}`;

describe('nesting depth of free-form JSON in params', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor);
  });
  beforeEach(() => {
    executions = 0;
  });
  afterAll(() => server.close());

  const refused = async (raw: string, field: string) => {
    const reply = await rpc(server.url, '', undefined, { raw });
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe('d');
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toContain(`${field}:`);
    expect(reply.body.error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    const violations = reply.body.error.data.find((d: { '@type': string }) => d['@type'].endsWith('BadRequest')).fieldViolations;
    expect(violations).toEqual([
      { field, description: `${field.split(/[.[]/).pop()!.replace(/\]$/, '')} must not nest deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
    expect(executions).toBe(0);
  };

  it('refuses message.metadata nested 5,000 levels with -32602 naming it, before the agent runs', async () => {
    await refused(send(message(`,"metadata":${objects(5_000)}`)), 'message.metadata');
  });

  it('refuses a data part, request metadata and part metadata one level past the limit', async () => {
    await refused(
      send(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"t"},{"data":${arrays(MAX_JSON_DEPTH + 1)}}]}}`),
      'message.parts[1].data',
    );
    await refused(
      send(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"t"}]},"metadata":{"k":${objects(MAX_JSON_DEPTH)}}}`),
      'metadata',
    );
    await refused(
      send(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"t","metadata":${objects(MAX_JSON_DEPTH + 1)}}]}}`),
      'message.parts[0].metadata',
    );
    await refused(send(`{"id":"t","metadata":${objects(100_000)}}`, 'CancelTask'), 'metadata');
    await refused(send(message(`,"metadata":${objects(MAX_JSON_DEPTH + 1)}`), 'SendStreamingMessage'), 'message.metadata');
  });

  it(`accepts exactly ${MAX_JSON_DEPTH} levels, and stores and returns them`, async () => {
    const reply = await rpc(server.url, '', undefined, {
      raw: send(
        `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":${arrays(MAX_JSON_DEPTH)}}],"metadata":${objects(MAX_JSON_DEPTH - 1, '{}')}}}`,
      ),
    });
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const artifact = reply.body.result.task.artifacts[0];
    expect(JSON.stringify(artifact.parts[0].data)).toBe(arrays(MAX_JSON_DEPTH));
    expect(JSON.stringify(artifact.metadata.echoed)).toBe(objects(MAX_JSON_DEPTH - 1, '{}'));
    expect(executions).toBe(1);
  });

  it('answers bodies nested 100,000+ levels that are not valid requests, and keeps serving', async () => {
    const cases: [string, number, unknown][] = [
      [arrays(500_000), -32600, null], // ~1 MB of brackets: the whole body, an array
      [objects(100_000), -32600, null], // an object, but not an envelope
      [arrays(500_000).slice(0, -1), -32700, null], // unclosed
      [`{"jsonrpc":"2.0","id":${arrays(100_000)},"method":"GetTask","params":{"id":"x"}}`, -32600, null],
      [`{"jsonrpc":"2.0","id":"d","method":${objects(100_000)},"params":{}}`, -32600, 'd'],
      [`{"jsonrpc":"2.0","id":"d","method":"GetTask","params":${arrays(100_000)}}`, -32602, 'd'],
      // Unknown members are dropped unread: the envelope's, and params' (here GetTask then runs).
      [`{"jsonrpc":"2.0","id":"d","method":"GetTask","extra":${objects(100_000)},"params":{"id":"x","extra":${arrays(100_000)}}}`, -32001, 'd'],
    ];
    for (const [raw, code, id] of cases) {
      const reply = await rpc(server.url, '', undefined, { raw });
      expect({ status: reply.status, code: reply.body?.error?.code, id: reply.body?.id }).toEqual({ status: 200, code, id });
    }
    expect(executions).toBe(0);
    const alive = await rpc(server.url, '', undefined, { raw: send(message('')) });
    expect(alive.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('exceedsJsonDepth', () => {
  it('counts objects and arrays, own keys only, including a parsed "__proto__" key', () => {
    expect(exceedsJsonDepth('text', 0)).toBe(false);
    expect(exceedsJsonDepth({}, 0)).toBe(true);
    expect(exceedsJsonDepth({}, 1)).toBe(false);
    expect(exceedsJsonDepth([[1]], 1)).toBe(true);
    expect(exceedsJsonDepth([[1]], 2)).toBe(false);
    expect(exceedsJsonDepth(JSON.parse('{"__proto__":{"a":{}}}'), 2)).toBe(true);
    expect(exceedsJsonDepth(JSON.parse('{"__proto__":{"a":{}}}'), 3)).toBe(false);
  });

  it('is iterative: a million levels (and a bound as large) cannot overflow the check', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 1_000_000; i++) deep = i % 2 ? { a: deep } : [deep];
    expect(exceedsJsonDepth(deep)).toBe(true);
    expect(exceedsJsonDepth(deep, 999_999)).toBe(true);
    expect(exceedsJsonDepth(deep, 1_000_000)).toBe(false);
  });

  it('treats a cycle (only possible in objects built in code) as too deep', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(exceedsJsonDepth(cycle)).toBe(true);
  });
});
