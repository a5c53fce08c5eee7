/**
 * traces: true loads @opentelemetry/api (the optional peer) and traces through the global
 * TracerProvider once it is loaded; before that, and without the package, nothing is traced.
 */
import type { Request } from 'express';
import { OPERATIONS } from '../../lib/http/operations';
import { routerTracing } from '../../lib/observability/tracing';
import { silentLogger } from '../../lib';
import { testTracing } from './helpers';

it('traces: true records through the global provider once @opentelemetry/api is loaded', async () => {
  const tracing = testTracing();
  tracing.api.trace.setGlobalTracerProvider(tracing.provider);
  const router = routerTracing(true, silentLogger)!;
  const req = { headers: {} } as Request;
  // Before the import settled: nothing is started.
  expect(router.operations.start(req, OPERATIONS.GetTask, 'jsonrpc', '1.0')).toBeUndefined();
  await router.ready;
  const trace = router.operations.start(req, OPERATIONS.GetTask, 'http+json', '1.0')!;
  trace.params({ id: 'task-1' });
  trace.succeeded({ id: 'task-1', contextId: 'ctx-1', status: { state: 'TASK_STATE_WORKING' } });
  const [span] = tracing.named('a2a.v1.A2AService/GetTask');
  expect(span.instrumentationScope.name).toBe('a2a-express-kit');
  expect(span.attributes).toMatchObject({
    'rpc.method': 'GetTask',
    'a2a.binding': 'http+json',
    'a2a.task.id': 'task-1',
    'a2a.context.id': 'ctx-1',
    'a2a.task.state': 'working',
  });
});

it('traces: false or absent: no tracing at all', () => {
  expect(routerTracing(false, silentLogger)).toBeUndefined();
  expect(routerTracing(undefined, silentLogger)).toBeUndefined();
});
