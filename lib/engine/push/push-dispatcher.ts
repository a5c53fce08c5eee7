/** Committed events to webhooks: per task in commit order, one outbox delivery per config, in the event's async context. */
import type { StreamResponse, Task } from '../../protocol/schemas.js';
import type { PushDelivery } from '../seams/push-outbox.js';
import type { TaskScope } from '../seams/task-store.js';
import { taskKey } from '../seams/task-store.js';
import { isTerminal } from '../task-state.js';
import { interceptSeam, type SeamHook } from '../seams/intercept.js';
import { DeliveryQueues, type RunIn } from './delivery-queues.js';
import { asCommitted, eventDeliveries } from './event-deliveries.js';
import { HostLimiter } from './host-limiter.js';
import { PushDeliverer } from './push-deliverer.js';
import type { PushDispatcherDeps } from './push-dispatcher-deps.js';

const runHere: RunIn = (fn) => fn();

interface TaskEntry {
  tail: Promise<void>;
  steps: number;
  /** The configs are removed when this drops to 0. */
  finals: number;
}

export class PushDispatcher {
  #deps: PushDispatcherDeps;
  readonly #hosts: HostLimiter;
  readonly #deliverer: PushDeliverer;
  readonly #tasks = new Map<string, TaskEntry>();
  readonly #abort = new AbortController();
  readonly #queues: DeliveryQueues;
  #idle: (() => void) | undefined;
  /** Resolves once resume() queued what the outbox held: later events queue behind it, in version order. */
  #ready: Promise<void> = Promise.resolve();
  #stopWatching: (() => void | Promise<void>) | undefined;
  /** Tasks with a v0.3 config (the body is the whole task): a copy as committed, since the writer appends in place. */
  readonly #v03Tasks = new Set<string>();

  constructor(deps: PushDispatcherDeps) {
    this.#deps = deps;
    this.#hosts = new HostLimiter(deps.settings.maxInFlightPerHost);
    this.#deliverer = new PushDeliverer(deps, this.#hosts, this.#abort.signal);
    const owner = { finalDone: (scope: TaskScope, taskId: string) => this.#finalDone(scope, taskId), drained: () => this.#checkIdle() };
    this.#queues = new DeliveryQueues({ deliverer: this.#deliverer, outbox: deps.outbox, logger: deps.logger, signal: this.#abort.signal, owner });
  }

  useSeamHooks(hooks: readonly SeamHook[]): void {
    const deps = this.#deps;
    this.#deps = { ...deps, configs: interceptSeam(deps.configs, 'pushConfigStore', hooks), outbox: interceptSeam(deps.outbox, 'pushOutbox', hooks) };
    this.#queues.useOutbox(this.#deps.outbox);
  }

  expectV03(scope: TaskScope, taskId: string): void {
    this.#v03Tasks.add(taskKey(scope, taskId));
  }

  get pending(): number {
    let steps = 0;
    for (const entry of this.#tasks.values()) steps += entry.steps;
    return steps + this.#queues.queued;
  }

  /** 0 once every delivery is done. */
  get held(): number {
    return this.#tasks.size + this.#queues.size + this.#hosts.size;
  }

  /** After `before` (an inline config stored), one delivery per config. */
  eventCommitted(
    scope: TaskScope,
    taskId: string,
    event: StreamResponse,
    task: Task,
    version: number,
    run: RunIn,
    before?: () => Promise<void>,
    v03?: boolean,
  ): void {
    if (this.#abort.signal.aborted) return;
    const key = taskKey(scope, taskId);
    if (v03) this.#v03Tasks.add(key);
    if (this.#v03Tasks.has(key)) task = asCommitted(task);
    let entry = this.#tasks.get(key);
    if (!entry) this.#tasks.set(key, (entry = { tail: Promise.resolve(), steps: 0, finals: 0 }));
    entry.steps++;
    const current = entry;
    const step = async (): Promise<void> => {
      try {
        if (before) await before();
        await this.#fanOut(key, scope, taskId, event, task, version, run, current);
      } catch (error) {
        this.#deps.logger.error({ err: error, taskId }, 'push notifications: could not queue the deliveries of an event');
      } finally {
        current.steps--;
        this.#forgetTask(key, current);
      }
    };
    entry.tail = entry.tail.then(() => this.#ready).then(() => run(step));
  }

  /** Queues what a durable outbox holds before any newer event; then, when shared, what it takes over. */
  resume(): Promise<void> {
    const resumed = (async () => {
      this.#take(await this.#deps.outbox.pending());
      if (this.#deps.outbox.watch && !this.#abort.signal.aborted)
        this.#stopWatching = this.#deps.outbox.watch((deliveries) => this.#take(deliveries));
    })();
    this.#ready = resumed.catch(() => undefined);
    return resumed;
  }

  #take(deliveries: readonly PushDelivery[]): void {
    for (const delivery of deliveries) {
      if (this.#abort.signal.aborted) return;
      if (delivery.final) this.#taskEntry(delivery.scope, delivery.taskId).finals++;
      this.#queues.add({ delivery, run: runHere });
    }
  }

  /** No new deliveries; up to `graceMs` for the queued ones, then aborts (a durable outbox keeps the rest). */
  async close(graceMs: number): Promise<void> {
    if (this.pending > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#idle = resolve;
        timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      clearTimeout(timer);
      this.#idle = undefined;
    }
    this.#abort.abort();
    await this.#stopWatching?.();
    await Promise.allSettled([...this.#tasks.values()].map((entry) => entry.tail));
    await this.#queues.settled();
    this.#tasks.clear();
    this.#v03Tasks.clear();
  }

  async #fanOut(
    key: string,
    scope: TaskScope,
    taskId: string,
    event: StreamResponse,
    task: Task,
    version: number,
    run: RunIn,
    entry: TaskEntry,
  ): Promise<void> {
    const final = isTerminal(task.status.state);
    const configs = await this.#deps.configs.list(scope, taskId);
    if (final) this.#v03Tasks.delete(key);
    else if (configs.some((config) => config.protocol === '0.3')) this.#v03Tasks.add(key);
    // Nothing to remove either: a config stored after this read checks the task again.
    if (configs.length === 0) return;
    const deliveries = eventDeliveries(configs, scope, taskId, event, task, version, final);
    const queued = (await this.#deps.outbox.add(deliveries)) ?? deliveries;
    for (const delivery of queued) {
      if (delivery.final) entry.finals++;
      this.#queues.add({ delivery, run });
    }
  }

  #taskEntry(scope: TaskScope, taskId: string): TaskEntry {
    const key = taskKey(scope, taskId);
    let entry = this.#tasks.get(key);
    if (!entry) this.#tasks.set(key, (entry = { tail: Promise.resolve(), steps: 0, finals: 0 }));
    return entry;
  }

  #forgetTask(key: string, entry: TaskEntry): void {
    if (entry.steps === 0 && entry.finals === 0 && this.#tasks.get(key) === entry) this.#tasks.delete(key);
    this.#checkIdle();
  }

  /** After the last, the task's configs go (the task has ended). */
  async #finalDone(scope: TaskScope, taskId: string): Promise<void> {
    const key = taskKey(scope, taskId);
    const entry = this.#tasks.get(key);
    if (!entry || --entry.finals > 0) return;
    try {
      await this.#deps.configs.deleteAll(scope, taskId);
    } catch (error) {
      this.#deps.logger.error({ err: error, taskId }, 'push notifications: could not remove the configs of an ended task');
    }
    this.#forgetTask(key, entry);
  }

  #checkIdle(): void {
    if (this.#idle && this.pending === 0) this.#idle();
  }
}
