/**
 * Delivers committed events to webhooks: per task, events are fanned out to the task's configs in
 * commit order; per (task, config), deliveries go one after the other in version order, each
 * retried with exponential backoff and jitter up to a bound, then the config is marked failing.
 * Each delivery runs in the async context of the request that produced its event. A task's
 * configs are removed once its terminal event has been delivered (or given up). Every per-task,
 * per-config and per-host structure is dropped as soon as it is empty.
 */
import type { Deadlines } from '../deadlines.js';
import { boundPushConfigs, boundPushOutbox } from './bounded-push-stores.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../logger.js';
import type { StreamResponse, Task } from '../../protocol/schemas.js';
import type { TaskScope } from '../seams/task-store.js';
import { taskKey } from '../task-key.js';
import { isTerminal } from '../task-state.js';
import { HostLimiter } from './host-limiter.js';
import type { PushConfigStore, PushProtocol } from '../seams/push-config-store.js';
import { pushBody, pushContentType } from './push-body.js';
import type { PushDelivery, PushOutbox } from '../seams/push-outbox.js';
import type { SsrfGuard } from './ssrf-guard.js';
import type { AttemptOutcome } from './webhook-client.js';
import { PushDeliverer } from './push-deliverer.js';

/** How delivery behaves; the router's `pushNotifications` option, defaults applied. */
export interface DeliverySettings {
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly maxInFlightPerHost: number;
}

/** What a delivery attempt reports (the metrics listen here). */
export interface PushDeliveryObserver {
  /** One HTTP attempt ended; `refused`: the SSRF guard refused the address at delivery time. */
  attempt?(info: { readonly outcome: AttemptOutcome['kind'] | 'refused'; readonly durationMs: number }): void;
  /** A delivery exhausted its attempts: its config is now failing. */
  gaveUp?(info: { readonly taskId: string; readonly tenant: string }): void;
}

/** Runs `fn` in the async context captured with the event (AsyncLocalStorage.snapshot()). */
type RunIn = <R>(fn: () => R) => R;

/** The task as of its commit: the arrays the writer appends to in place (artifacts, their parts, history) copied. */
function asCommitted(task: Task): Task {
  const copy = { ...task };
  if (task.artifacts) copy.artifacts = task.artifacts.map((artifact) => ({ ...artifact, parts: artifact.parts.slice() }));
  if (task.history) copy.history = task.history.slice();
  return copy;
}
const runHere: RunIn = (fn) => fn();

interface Queued {
  readonly delivery: PushDelivery;
  readonly run: RunIn;
}

/** Deliveries of one (task, config), in version order; dropped when empty. */
interface ConfigQueue {
  readonly items: Queued[];
  draining: boolean;
}

/** A task's fan-out chain and the final deliveries still outstanding. */
interface TaskEntry {
  tail: Promise<void>;
  steps: number;
  /** Final deliveries not yet done; the configs are removed when it drops to 0. */
  finals: number;
}

export interface PushDispatcherDeps {
  readonly configs: PushConfigStore;
  readonly outbox: PushOutbox;
  readonly guard: SsrfGuard;
  readonly logger: Logger;
  readonly settings: DeliverySettings;
  readonly observer?: PushDeliveryObserver;
}

export class PushDispatcher {
  #deps: PushDispatcherDeps;
  readonly #hosts: HostLimiter;
  readonly #deliverer: PushDeliverer;
  readonly #tasks = new Map<string, TaskEntry>();
  readonly #queues = new Map<string, ConfigQueue>();
  readonly #abort = new AbortController();
  /** Running queue loops (awaited by close). */
  readonly #drains = new Set<Promise<void>>();
  #queued = 0;
  #idle: (() => void) | undefined;
  /** Resolves once resume() queued what the outbox held: later events queue behind it, in version order. */
  #ready: Promise<void> = Promise.resolve();
  #stopWatching: (() => void | Promise<void>) | undefined;
  /**
   * Tasks known to have a v0.3 config (whose body is the whole task, built after awaits): their
   * events get a copy of the task as committed, since the writer appends to its arrays in place.
   */
  readonly #v03Tasks = new Set<string>();

  constructor(deps: PushDispatcherDeps) {
    this.#deps = deps;
    this.#hosts = new HostLimiter(deps.settings.maxInFlightPerHost);
    this.#deliverer = new PushDeliverer(deps, this.#hosts, this.#abort.signal);
  }

  /** Puts every config store and outbox call under `deadlines` (the engine's storeTimeoutMs). */
  useDeadlines(deadlines: Deadlines): void {
    const deps = this.#deps;
    this.#deps = { ...deps, configs: boundPushConfigs(deps.configs, deadlines), outbox: boundPushOutbox(deps.outbox, deadlines) };
  }

  /** A v0.3 config is being stored for the task: its next events keep a copy of the task (see #v03Tasks). */
  expectV03(scope: TaskScope, taskId: string): void {
    this.#v03Tasks.add(taskKey(scope, taskId));
  }

  /** Fan-outs and deliveries not yet done in this process (0 when nothing is held). */
  get pending(): number {
    let steps = 0;
    for (const entry of this.#tasks.values()) steps += entry.steps;
    return steps + this.#queued;
  }

  /** Structures held (task chains, config queues, busy hosts): 0 once every delivery is done. */
  get held(): number {
    return this.#tasks.size + this.#queues.size + this.#hosts.size;
  }

  /**
   * A committed event (called synchronously by the engine, in the producing request's context):
   * after `before` (an inline config being stored), the task's configs are read and one delivery
   * per config is queued. Steps of one task run in commit order.
   */
  eventCommitted(scope: TaskScope, taskId: string, event: StreamResponse, task: Task, version: number, run: RunIn, before?: () => Promise<void>, v03?: boolean): void {
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

  /**
   * Queues what a previous process recorded and did not finish (a durable outbox), before any
   * event committed meanwhile; then, with an outbox shared by replicas, what it takes over later.
   */
  resume(): Promise<void> {
    const resumed = (async () => {
      this.#take(await this.#deps.outbox.pending());
      if (this.#deps.outbox.watch && !this.#abort.signal.aborted) this.#stopWatching = this.#deps.outbox.watch((deliveries) => this.#take(deliveries));
    })();
    // Live events wait for it, even when it fails (the failure is the caller's to log).
    this.#ready = resumed.catch(() => undefined);
    return resumed;
  }

  #take(deliveries: readonly PushDelivery[]): void {
    for (const delivery of deliveries) {
      if (this.#abort.signal.aborted) return;
      if (delivery.final) this.#taskEntry(delivery.scope, delivery.taskId).finals++;
      this.#queue({ delivery, run: runHere });
    }
  }

  /**
   * Stops: no new deliveries; waits up to `graceMs` for the queued ones, then aborts attempts and
   * retry waits. A durable outbox keeps what was not done for the next start.
   */
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
    // Aborted attempts and waits end at once; let the loops notice and free what they hold.
    await Promise.allSettled([...this.#tasks.values()].map((entry) => entry.tail));
    await Promise.allSettled([...this.#drains]);
    // Final counts are this process's bookkeeping only: the outbox has the rest.
    this.#tasks.clear();
    this.#v03Tasks.clear();
  }

  async #fanOut(key: string, scope: TaskScope, taskId: string, event: StreamResponse, task: Task, version: number, run: RunIn, entry: TaskEntry): Promise<void> {
    const final = isTerminal(task.status.state);
    const configs = await this.#deps.configs.list(scope, taskId);
    if (final) this.#v03Tasks.delete(key);
    else if (configs.some((config) => config.protocol === '0.3')) this.#v03Tasks.add(key);
    // Nothing to deliver (and nothing to remove: a config stored after this read checks the task
    // again, and removes itself if it ended).
    if (configs.length === 0) return;
    const bodies = new Map<PushProtocol, string>();
    const bodyFor = (protocol: PushProtocol): string => {
      let body = bodies.get(protocol);
      if (body === undefined) bodies.set(protocol, (body = pushBody(protocol, event, task)));
      return body;
    };
    const deliveries: PushDelivery[] = configs.map((config) => ({
      id: randomUUID(),
      scope,
      taskId,
      configId: config.id,
      version,
      body: bodyFor(config.protocol),
      contentType: pushContentType(config.protocol),
      final,
      attempts: 0,
    }));
    const queued = (await this.#deps.outbox.add(deliveries)) ?? deliveries;
    for (const delivery of queued) {
      if (delivery.final) entry.finals++;
      this.#queue({ delivery, run });
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

  #queue(item: Queued): void {
    // Closed: the outbox keeps it for the next start (a durable one); nothing is held here.
    if (this.#abort.signal.aborted) return;
    const { scope, taskId, configId } = item.delivery;
    const key = `${taskKey(scope, taskId)}\u0000${configId}`;
    let queue = this.#queues.get(key);
    if (!queue) this.#queues.set(key, (queue = { items: [], draining: false }));
    const { items } = queue;
    const version = item.delivery.version;
    // Version order, behind the one in flight (items[0]): deliveries taken over from a durable
    // outbox may arrive after a later live one.
    let at = items.length;
    while (at > 1 && items[at - 1].delivery.version > version) at--;
    items.splice(at, 0, item);
    this.#queued++;
    if (!queue.draining) {
      queue.draining = true;
      const drain = this.#drain(key, queue).finally(() => this.#drains.delete(drain));
      this.#drains.add(drain);
    }
  }

  /** Delivers a config's queue in order; each delivery in its own event's context. */
  async #drain(key: string, queue: ConfigQueue): Promise<void> {
    while (queue.items.length > 0) {
      const { delivery, run } = queue.items[0];
      try {
        await run(() => this.#deliverer.deliver(delivery));
      } catch (error) {
        this.#deps.logger.error({ err: error, taskId: delivery.taskId }, 'push notifications: a delivery failed unexpectedly');
      }
      if (this.#abort.signal.aborted) {
        // Closed: what is left stays in the outbox (a durable one resumes it); memory is freed.
        this.#queued -= queue.items.length;
        queue.items.length = 0;
        break;
      }
      queue.items.shift();
      this.#queued--;
      await this.#deps.outbox.remove(delivery.id).catch((error: unknown) => {
        this.#deps.logger.error({ err: error, taskId: delivery.taskId }, 'push notifications: the outbox failed to remove a delivery');
      });
      if (delivery.final) await this.#finalDone(delivery.scope, delivery.taskId);
    }
    this.#queues.delete(key);
    this.#checkIdle();
  }

  /** One final delivery done; after the last, the task's configs go (the task has ended). */
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
