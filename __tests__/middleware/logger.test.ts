/** withRequestContext(logger): request and trace ids on every line logged while handling a message. */
import type { AgentExecutor, Logger } from '../../lib';
import { a2aTracing, withRequestContext } from '../../lib/middleware';
import { startAgent } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';

type Line = [string, ...unknown[]];

function recorder(lines: Line[]): Logger {
  const record =
    (level: string) =>
    (...args: unknown[]) => {
      lines.push([level, ...args]);
    };
  return { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
}

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('withRequestContext', () => {
  it('adds requestId/traceId/spanId inside execute(), keeps explicit fields and the call arity', async () => {
    const lines: Line[] = [];
    const log = withRequestContext(recorder(lines));
    const failure = new Error('boom');
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await new Promise((resolve) => setImmediate(resolve));
        log.info({ step: 'start', requestId: 'explicit-wins' }, 'working');
        log.debug('plain message');
        log.error(failure, 'failed');
        await events.reply('ok');
      },
    };
    const server = await startAgent(executor, { before: [a2aTracing({ opentelemetry: false })] });
    try {
      await rpc(server.url, 'SendMessage', userMessage('hi'), { headers: { 'x-request-id': 'req-42', traceparent: TRACEPARENT } });
    } finally {
      await server.close();
    }
    const ids = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    expect(lines).toEqual([
      ['info', { requestId: 'explicit-wins', ...ids, step: 'start' }, 'working'],
      ['debug', { requestId: 'req-42', ...ids }, 'plain message'],
      ['error', { requestId: 'req-42', ...ids, err: failure }, 'failed'],
    ]);
  });

  it('passes lines through unchanged outside a request', () => {
    const lines: Line[] = [];
    const log = withRequestContext(recorder(lines));
    log.warn({ a: 1 }, 'm');
    log.info('only text');
    expect(lines).toEqual([
      ['warn', { a: 1 }, 'm'],
      ['info', 'only text'],
    ]);
  });
});
