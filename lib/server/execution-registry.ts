/** The live executions, by task id. An entry exists only while a turn or a cancel runs. */
import type { Execution } from './execution.js';

export class ExecutionRegistry {
  readonly #byTaskId = new Map<string, Execution>();

  get size(): number {
    return this.#byTaskId.size;
  }

  get(taskId: string): Execution | undefined {
    return this.#byTaskId.get(taskId);
  }

  add(execution: Execution): void {
    this.#byTaskId.set(execution.taskId, execution);
  }

  /** Forgets `execution` (and only it: a newer execution of the same id stays). */
  remove(execution: Execution): void {
    if (this.#byTaskId.get(execution.taskId) === execution) this.#byTaskId.delete(execution.taskId);
  }

  /** Observers attached to live executions, all together (tests and operators). */
  get observerCount(): number {
    let count = 0;
    for (const execution of this.#byTaskId.values()) count += execution.observerCount;
    return count;
  }
}
