/**
 * One replica with traces on, for the multi-process tracing test: the router on a shared Redis
 * (store, bus, leases) with `traces: { api, tracer }` from an SDK provider that prints every ended
 * span as a line `SPAN {json}` (name, ids, parent, attributes, links). Run with
 * `node --import tsx __tests__/helpers/traced-replica-server.ts` and env REDIS_URL, KEY_PREFIX,
 * LEASE_TTL_MS; prints `READY <port>`. Agent: `park` asks for input; a follow-up completes.
 */
import express from 'express';
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createA2ARouter, silentLogger, type AgentExecutor } from 'a2a-express-kit';
import { createRedisBackend } from 'a2a-express-kit/redis';
import { testCard } from './fixtures';

/** One JSON line per ended span on stdout. */
const printer: SpanProcessor = {
  onStart() {},
  onEnd(span: ReadableSpan) {
    const line = {
      name: span.name,
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      parentSpanId: span.parentSpanContext?.spanId,
      attributes: span.attributes,
      events: span.events.map((event) => event.name),
      links: span.links.map((link) => ({ traceId: link.context.traceId, spanId: link.context.spanId, attributes: link.attributes })),
    };
    process.stdout.write(`SPAN ${JSON.stringify(line)}\n`);
  },
  forceFlush: async () => {},
  shutdown: async () => {},
};

const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'park') return events.requireInput('what next?');
    await events.complete('done');
  },
};

async function main(): Promise<void> {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const provider = new BasicTracerProvider({ spanProcessors: [printer] });
  const backend = await createRedisBackend({
    url: process.env.REDIS_URL!,
    keyPrefix: process.env.KEY_PREFIX,
    leaseTtlMs: Number(process.env.LEASE_TTL_MS ?? 10_000),
  });
  const router = createA2ARouter({
    agentCard: testCard,
    executor,
    logger: silentLogger,
    traces: { api, tracer: provider.getTracer('a2a-express-kit') },
    callContext: () => ({ caller: { id: 'alice', authenticated: true }, tenant: 'acme' }),
    ...backend.options,
  });
  const app = express();
  app.use('/agent', router);
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
