/**
 * The executions live in this process (the registry, by task key), what each new one is built with,
 * and the final writes they owe after a store outage (settled by a fresh execution of the task).
 */
import type { VersionedTask, TaskScope } from './seams/task-store.js';
import type { ExecutionRegistry } from './seams/execution-registry.js';
import { Execution, type ExecutionDeps } from './execution/execution.js';
import { OwedWrites, type OwedWrite } from './owed-writes.js';

export class Executions {
  readonly #registry: ExecutionRegistry<Execution>;
  readonly #deps: ExecutionDeps;
  /** The engine's final writes (FAILED, CANCELED) a store outage refused, tried again while the process lives. */
  readonly owed: OwedWrites;
  /** Resolves the drained() promise handed out, once no execution is live. */
  #drained: (() => void) | undefined;

  constructor(registry: ExecutionRegistry<Execution>, deps: Omit<ExecutionDeps, 'onIdle' | 'owed'>) {
    this.#registry = registry;
    this.owed = new OwedWrites({ logger: deps.logger, leases: deps.leases, settle: (write) => this.#settleOwed(write) });
    this.#deps = { ...deps, owed: this.owed, onIdle: (execution) => this.#forget(execution) };
  }

  get size(): number {
    return this.#registry.size;
  }

  get(key: string): Execution | undefined {
    return this.#registry.get(key);
  }

  values(): Iterable<Execution> {
    return this.#registry.values();
  }

  /** A new execution of the task, registered under `key` (`stored`: the task as read, absent for a new one). */
  open(key: string, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask): Execution {
    const execution = new Execution(this.#deps, key, scope, taskId, contextId, stored);
    this.#registry.add(key, execution);
    return execution;
  }

  /** The live execution of `key`, or a new one (see open). */
  getOrOpen(key: string, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask): Execution {
    return this.#registry.get(key) ?? this.open(key, scope, taskId, contextId, stored);
  }

  /** What the publishers of handed-off work write with (store, bus, logger, hooks). */
  get deps(): ExecutionDeps {
    return this.#deps;
  }

  /** Resolves once no execution is live (at once when none is). */
  drained(): Promise<void> {
    if (this.#registry.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => (this.#drained = resolve));
  }

  #forget(execution: Execution): void {
    this.#registry.remove(execution.key, execution);
    if (this.#registry.size === 0) this.#drained?.();
  }

  /**
   * An owed write, made by a fresh execution of the task unless one is live here (it owns the task;
   * the write stays owed until it is idle). Rejects when the store still fails.
   */
  async #settleOwed(write: OwedWrite): Promise<void> {
    const { key, scope, taskId, contextId, state, text } = write;
    if (this.#registry.get(key)) {
      this.owed.owe(write);
      return;
    }
    await this.open(key, scope, taskId, contextId).settleOwed(state, text);
  }
}
