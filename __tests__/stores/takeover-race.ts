/**
 * The takeover race of a claiming push outbox, forced: the heir's sweep has claimed a task and is
 * held at one step (`cursors`: before it reads the log; `task`: after) while the heir commits event 4
 * of the task itself and adds its live delivery. What the dispatcher would queue, in order, is returned.
 */
import { randomUUID } from 'node:crypto';
import type { PushDelivery, TaskScope } from 'a2a-express-kit';

export type SweepStep = 'cursors' | 'task';

interface Heir {
  readonly taskStore: { get(...args: never[]): Promise<unknown> };
  readonly configStore: { cursors(...args: never[]): Promise<unknown> };
  readonly outbox: {
    watch(take: (deliveries: PushDelivery[]) => void): () => Promise<void>;
    add(deliveries: readonly PushDelivery[]): Promise<readonly PushDelivery[]>;
  };
}

/** Holds the first call of the heir's sweep at `step` (its stores are real; only that call waits). */
function holdAt(heir: Heir, step: SweepStep) {
  let reached!: () => void;
  let open!: () => void;
  const atGate = new Promise<void>((resolve) => (reached = resolve));
  const gate = new Promise<void>((resolve) => (open = resolve));
  let armed = true;
  const hold = async () => {
    if (!armed) return;
    armed = false;
    reached();
    await gate;
  };
  const stores = heir as unknown as Record<'taskStore' | 'configStore', Record<'get' | 'cursors', (...args: unknown[]) => Promise<unknown>>>;
  if (step === 'task') {
    const get = stores.taskStore.get.bind(stores.taskStore);
    stores.taskStore.get = async (...args) => {
      const task = await get(...args);
      await hold();
      return task;
    };
  } else {
    const cursors = stores.configStore.cursors.bind(stores.configStore);
    stores.configStore.cursors = async (...args) => {
      await hold();
      return cursors(...args);
    };
  }
  return { atGate, open };
}

export async function takeoverRace(
  heir: Heir,
  step: SweepStep,
  scope: TaskScope,
  taskId: string,
  commitFourth: () => Promise<void>,
): Promise<number[]> {
  const { atGate, open } = holdAt(heir, step);
  const queued: number[] = [];
  const stop = heir.outbox.watch((deliveries) => queued.push(...deliveries.filter((d) => d.taskId === taskId).map((d) => d.version)));
  await atGate;
  await commitFourth();
  const live = {
    id: `live-${randomUUID()}`,
    scope,
    taskId,
    configId: 'c-1',
    version: 4,
    body: '{}',
    contentType: 'application/a2a+json',
    final: false,
    attempts: 0,
  };
  const added = heir.outbox.add([live]).then((deliveries) => queued.push(...deliveries.map((d) => d.version)));
  // The sweep stays held a moment: an add that does not wait for it (the defect) queues first. A
  // window for something that must not happen; with the fix the add waits whatever its length.
  await Promise.race([added, new Promise((resolve) => setTimeout(resolve, 100))]);
  open();
  await added;
  await stop();
  return queued;
}
