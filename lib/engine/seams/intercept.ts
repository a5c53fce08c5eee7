/** The one wrapper of the seams' calls: each concern (deadline, metrics, traces) is a hook; a call no hook wraps costs nothing. */
import { IMMEDIATE_WRITES, immediateReadOf, immediateWritesOf, type ImmediateWrites } from '../immediate-writes.js';
import type { TaskEventBus } from './task-event-bus.js';
import type { TaskLease, TaskLeases } from './task-leases.js';
import type { TaskStore } from './task-store.js';

/** The methods a hook may wrap, by seam; the others (close(), publish(), subscribe()...) always pass through. */
const SEAM_METHODS = {
  taskStore: ['get', 'create', 'update', 'list', 'findUnfinished'],
  bus: ['history'],
  leases: ['acquire', 'claimExpired'],
  lease: ['release'],
  pushConfigStore: ['put', 'get', 'list', 'delete', 'deleteAll', 'setFailing'],
  pushOutbox: ['add', 'recordAttempts', 'remove', 'pending'],
} as const;

export type SeamName = keyof typeof SEAM_METHODS;

export interface SeamCall {
  readonly seam: SeamName;
  readonly method: string;
  readonly name: string;
}

export type SeamNext = (args: unknown[]) => unknown;

export interface SeamHook {
  /** Whether the hook wraps `call`'s method (asked once, when a seam is wrapped). */
  wraps(call: SeamCall): boolean;
  around(call: SeamCall, args: unknown[], next: SeamNext): unknown;
  /** Writes and reads a store makes within the call (immediate-writes.ts) may skip this hook. */
  readonly skipsImmediate?: boolean;
}

/** `inner` behind every hook of `hooks` that wraps `call`, outermost first; undefined when none does. */
function chain(call: SeamCall, hooks: readonly SeamHook[], inner: SeamNext): SeamNext | undefined {
  const applied = hooks.filter((hook) => hook.wraps(call));
  if (applied.length === 0) return undefined;
  return applied.reduceRight<SeamNext>((next, hook) => (args) => hook.around(call, args, next), inner);
}

const callOf = (seam: SeamName, method: string): SeamCall => ({ seam, method, name: `${seam}.${method}()` });

/** `target` with its calls through `hooks` (other methods bound to it, getters read from it), or itself when no hook applies. */
export function interceptSeam<T extends object>(target: T, seam: SeamName, hooks: readonly SeamHook[]): T {
  const source = target as Record<string, unknown>;
  const chains = new Map<string, SeamNext>();
  for (const method of SEAM_METHODS[seam]) {
    const fn = source[method];
    if (typeof fn !== 'function') continue;
    const next = chain(callOf(seam, method), hooks, (args) => (fn as (...a: unknown[]) => unknown).apply(target, args));
    if (next) chains.set(method, next);
  }
  if (chains.size === 0) return target;
  const wrapped = Object.create(target) as Record<string, unknown>;
  for (const [name, kind] of members(target)) {
    const next = chains.get(name);
    if (kind === 'accessor') Object.defineProperty(wrapped, name, { get: () => source[name], enumerable: true });
    else wrapped[name] = next ? (...args: unknown[]) => next(args) : (source[name] as (...a: unknown[]) => unknown).bind(target);
  }
  if (seam === 'taskStore') offerImmediate(wrapped as unknown as TaskStore, target as TaskStore, hooks);
  return wrapped as T;
}

/** Within-call writes (read) stay on offer while every hook on create and update (get) skips them; always defined, never inherited. */
function offerImmediate(wrapped: TaskStore, store: TaskStore, hooks: readonly SeamHook[]): void {
  const skipped = (...methods: string[]): boolean =>
    hooks.every((hook) => hook.skipsImmediate || methods.every((method) => !hook.wraps(callOf('taskStore', method))));
  const writes = skipped('create', 'update') ? immediateWritesOf(store) : undefined;
  const getNow = skipped('get') ? immediateReadOf(store) : undefined;
  const own: ImmediateWrites | undefined = writes && {
    create: wrapped.create,
    update: wrapped.update,
    createNow: writes.createNow,
    updateNow: writes.updateNow,
    ...(getNow ? { get: wrapped.get, getNow } : {}),
  };
  Object.defineProperty(wrapped, IMMEDIATE_WRITES, { value: own });
}

/** The leases and the leases they grant through `hooks`; `onWrites` kept only when it rides on `store`, then on `wrappedStore`. */
function interceptLeases(leases: TaskLeases, hooks: readonly SeamHook[], store: TaskStore, wrappedStore: TaskStore): TaskLeases {
  const lease = (granted: TaskLease): TaskLease => interceptSeam(granted, 'lease', hooks);
  const acquire = chain(callOf('leases', 'acquire'), hooks, ([key, task, waitMs]) =>
    leases.acquire(key as string, task as never, waitMs as number).then((granted) => granted && lease(granted)),
  );
  const claimExpired = chain(callOf('leases', 'claimExpired'), hooks, () => leases.claimExpired());
  const onWrites = leases.onWrites?.store === store ? leases.onWrites : undefined;
  return {
    onWrites: onWrites && { store: wrappedStore, leaseOnCreate: (key, task) => lease(onWrites.leaseOnCreate(key, task)) },
    get sweepIntervalMs() {
      return leases.sweepIntervalMs;
    },
    acquire: acquire ? (key, task, waitMs) => acquire([key, task, waitMs]) as Promise<TaskLease | undefined> : (...args) => leases.acquire(...args),
    claimExpired: claimExpired ? () => claimExpired([]) as ReturnType<TaskLeases['claimExpired']> : () => leases.claimExpired(),
  };
}

/** The engine's seams, each call through `hooks` (the one place they are wrapped). */
export function interceptSeams<S extends { taskStore: TaskStore; bus?: TaskEventBus; leases?: TaskLeases }>(seams: S, hooks: readonly SeamHook[]): S {
  const { taskStore, bus, leases } = seams;
  const wrappedStore = interceptSeam(taskStore, 'taskStore', hooks);
  return {
    ...seams,
    taskStore: wrappedStore,
    bus: bus && interceptSeam(bus, 'bus', hooks),
    leases: leases && interceptLeases(leases, hooks, taskStore, wrappedStore),
  };
}

/** Methods and getters along the prototype chain, below Object.prototype. */
function members(target: object): Map<string, 'method' | 'accessor'> {
  const found = new Map<string, 'method' | 'accessor'>();
  for (let proto: object | null = target; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || found.has(name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
      if (descriptor.get) found.set(name, 'accessor');
      else if (typeof descriptor.value === 'function') found.set(name, 'method');
    }
  }
  return found;
}
