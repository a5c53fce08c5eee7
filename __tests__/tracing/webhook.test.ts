/**
 * traces and push notifications: a span per webhook request (kind CLIENT), a child of the turn
 * whose events it delivers, whose W3C traceparent the loopback receiver gets, so the receiver joins
 * the task's trace; the config's token and credentials appear in no span.
 */
import { A2A_SPANS, type AgentExecutor } from '../../lib';
import { until } from '../helpers/async';
import { startAgent } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { startReceiver } from '../push/receiver';
import { callerTrace, leaks, parentOf, testTracing } from './helpers';

const tracing = testTracing();

const agent: AgentExecutor = {
  async execute(_ctx, events) {
    await events.start('working');
    await events.complete('done');
  },
};

it('each webhook request carries the traceparent of its span, a child of the turn in the caller’s trace', async () => {
  const receiver = await startReceiver();
  const server = await startAgent(agent, {
    traces: { api: tracing.api, tracer: tracing.provider.getTracer('a2a-express-kit') },
    pushNotifications: { allow: ['127.0.0.1'] },
  });
  try {
    const caller = callerTrace();
    const push = { url: receiver.url, token: 'push-token-secret-1', authentication: { scheme: 'Bearer', credentials: 'cred-secret-2' } };
    const reply = await rpc(
      server.url,
      'SendMessage',
      { ...userMessage('report'), configuration: { taskPushNotificationConfig: push } },
      { headers: { traceparent: caller.traceparent } },
    );
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    await until(
      () =>
        server.router.livePushDeliveries === 0 &&
        tracing.named(A2A_SPANS.pushAttempt).length >= receiver.delivered.length &&
        receiver.delivered.length >= 2,
      'deliveries',
    );

    const [turn] = tracing.named(A2A_SPANS.turn);
    const attempts = tracing.named(A2A_SPANS.pushAttempt);
    expect(attempts).toHaveLength(receiver.requests.length);
    for (const received of receiver.requests) {
      const [version, traceId, spanId, flags] = String(received.headers.traceparent).split('-');
      expect([version, traceId, flags]).toEqual(['00', caller.traceId, '01']);
      const span = attempts.find((s) => s.spanContext().spanId === spanId)!;
      expect(span.kind).toBe(tracing.api.SpanKind.CLIENT);
      expect(parentOf(span)).toBe(turn.spanContext().spanId);
      expect(span.attributes).toMatchObject({
        'a2a.task.id': reply.body.result.task.id,
        'a2a.push.attempt': 1,
        'a2a.push.outcome': 'delivered',
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'server.address': '127.0.0.1',
      });
    }
    expect(leaks(tracing.spans(), ['secret', 'Bearer', receiver.url])).toEqual([]);
  } finally {
    await server.close();
    await receiver.close();
  }
});
