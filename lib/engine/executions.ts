/**
 * The executions live in this process: the registry (by task key) and what each new one is built
 * with. An execution is forgotten as soon as it goes idle.
 */
import type { VersionedTask, TaskScope } from './seams/task-store.js';
import type { ExecutionRegistry } from './seams/execution-registry.js';
import { Execution, type ExecutionDeps } from './execution/execution.js';

export class Executions {
  readonly #registry: ExecutionRegistry<Execution>;
  readonly #deps: ExecutionDeps;

  /** `onIdle` runs after an idle execution was forgotten. */
  constructor(registry: ExecutionRegistry<Execution>, deps: Omit<ExecutionDeps, 'onIdle'>, onIdle: () => void) {
    this.#registry = registry;
    this.#deps = {
      ...deps,
      onIdle: (execution) => {
        registry.remove(execution.key, execution);
        onIdle();
      },
    };
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
}
