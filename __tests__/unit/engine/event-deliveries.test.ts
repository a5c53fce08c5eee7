/** What one committed event becomes for push: a delivery per config, one body per protocol; the task copied as committed. */
import { asCommitted, eventDeliveries } from '../../../lib/engine/push/event-deliveries';
import type { StoredPushConfig } from '../../../lib/engine/seams/push-config-store';
import { scope, status, task } from './engine-fixtures';

const config = (id: string, protocol: '1.0' | '0.3') => ({ id, url: 'http://127.0.0.1/hook', protocol }) as unknown as StoredPushConfig;

describe('eventDeliveries', () => {
  it('makes one delivery per config, the v1.0 body the event and the v0.3 body the task', () => {
    const event = status('TASK_STATE_COMPLETED');
    const done = task('TASK_STATE_COMPLETED');
    const deliveries = eventDeliveries([config('a', '1.0'), config('b', '1.0'), config('c', '0.3')], scope, 'task-1', event, done, 7, true);
    expect(deliveries.map((d) => [d.configId, d.version, d.final, d.attempts, d.contentType])).toEqual([
      ['a', 7, true, 0, 'application/a2a+json'],
      ['b', 7, true, 0, 'application/a2a+json'],
      ['c', 7, true, 0, 'application/json'],
    ]);
    expect(JSON.parse(deliveries[0].body)).toEqual(event);
    expect(deliveries[1].body).toBe(deliveries[0].body);
    expect(JSON.parse(deliveries[2].body)).toMatchObject({ id: 'task-1', kind: 'task', status: { state: 'completed' } });
    expect(new Set(deliveries.map((d) => d.id)).size).toBe(3);
  });
});

describe('asCommitted', () => {
  it('copies the arrays the writer appends to in place', () => {
    const live = { ...task('TASK_STATE_WORKING'), artifacts: [{ artifactId: 'a', parts: [{ text: 'x' }] }] };
    const copy = asCommitted(live);
    live.history!.push(live.history![0]);
    live.artifacts[0].parts.push({ text: 'y' });
    live.artifacts.push({ artifactId: 'b', parts: [] });
    expect(copy.history).toHaveLength(1);
    expect(copy.artifacts).toEqual([{ artifactId: 'a', parts: [{ text: 'x' }] }]);
  });
});
