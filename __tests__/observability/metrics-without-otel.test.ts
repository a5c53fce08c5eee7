/** metrics: true in an app without @opentelemetry/api: one warning, nothing recorded, nothing broken. */
import type { Logger } from '../../lib';
import { interceptSeam } from '../../lib/engine/seams/intercept';
import type { TaskStore } from '../../lib/engine/seams/task-store';

jest.mock('@opentelemetry/api', () => {
  throw new Error("Cannot find module '@opentelemetry/api'");
});

it('warns once that @opentelemetry/api is missing; the metrics wiring stays inert', async () => {
  const { globalMeter } = await import('../../lib/observability/meter.js');
  const { routerMetrics } = await import('../../lib/observability/metrics.js');
  const warnings: unknown[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (line) => void warnings.push(line), error() {} };

  const slot = globalMeter(logger);
  await slot.ready;
  expect(slot.meter).toBeUndefined();
  expect(warnings).toEqual([expect.stringMatching(/@opentelemetry\/api is not installed/)]);

  // The router's wiring stays inert: listeners and the store wrapper record nothing and pass through.
  const metrics = routerMetrics(true, logger)!;
  await metrics.ready;
  metrics.events.taskFinished?.({ taskId: 't', tenant: '', state: 'TASK_STATE_COMPLETED' });
  const store = interceptSeam<TaskStore>(
    {
      get: async () => undefined,
      create: async () => 1,
      update: async () => 2,
      list: async () => ({ tasks: [], nextPageToken: '', totalSize: 0 }),
    },
    'taskStore',
    [metrics.seamHook],
  );
  await expect(store.create({ tenant: '', owner: 'a' }, { id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } })).resolves.toBe(1);
});
