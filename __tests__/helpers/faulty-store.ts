/** A task store whose calls can be switched to hang or to fail (an outage), then back: for the fault suites. */
import { InMemoryTaskStore, type TaskStore } from '../../lib';

export type StoreMode = 'ok' | 'hang-reads' | 'fail-writes';

export class FaultyStore implements TaskStore {
  mode: StoreMode = 'ok';
  /** Writes refused while the mode was 'fail-writes'. */
  refusedWrites = 0;
  readonly #inner: TaskStore;

  constructor(inner: TaskStore = new InMemoryTaskStore()) {
    this.#inner = inner;
  }

  get: TaskStore['get'] = (scope, taskId) => (this.mode === 'hang-reads' ? new Promise(() => {}) : this.#inner.get(scope, taskId));
  list: TaskStore['list'] = (scope, query) => (this.mode === 'hang-reads' ? new Promise(() => {}) : this.#inner.list(scope, query));
  create: TaskStore['create'] = (scope, task) => this.#write(() => this.#inner.create(scope, task));
  update: TaskStore['update'] = (scope, task, version, change) => this.#write(() => this.#inner.update(scope, task, version, change));

  #write(call: () => Promise<number>): Promise<number> {
    if (this.mode !== 'fail-writes') return call();
    this.refusedWrites++;
    return Promise.reject(new Error('ENOSPC: no space left on device'));
  }
}
