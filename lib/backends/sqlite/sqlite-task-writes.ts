/**
 * The write path of SqliteTaskStore, each write an IMMEDIATE transaction (a savepoint inside a group commit): create, a whole-task update, and the
 * delta writes (an artifact chunk appends one row, a status change rewrites the body and the listing columns).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Artifact, Task } from '../../protocol/schemas.js';
import { isTerminal } from '../../engine/task-state.js';
import { TaskExistsError, TaskNotFoundInStoreError, TaskVersionConflictError, type TaskScope } from '../../engine/seams/task-store.js';
import { bodyJson, fits, headColumns, headJson, snapshot, type ArtifactWrite, type HeadRow, type StatusWrite } from './sqlite-task-rows.js';
import { artifactTexts } from './sqlite-task-reads.js';
import type { TaskStatements } from './sqlite-statements.js';

type Event = string | undefined;

/**
 * Every write is a compare-and-set on the version that refuses a terminal task and another scope, and logs its event for push delivery in the same
 * transaction while the task has configs.
 */
export class SqliteTaskWrites {
  readonly #s: TaskStatements;
  /** Stores a new task at version 1; throws TaskExistsError when its id is taken in any scope. */
  readonly create: (scope: TaskScope, task: Task) => number;
  /** Stores the whole task (already a copy) at expectedVersion + 1. */
  readonly update: (scope: TaskScope, task: Task, expectedVersion: number, event: Event) => number;
  /** Writes an artifact event from the update alone. */
  readonly artifact: (scope: TaskScope, taskId: string, expectedVersion: number, write: ArtifactWrite, event: Event) => number;
  /** Writes a status event: the body and the listing columns. */
  readonly status: (scope: TaskScope, taskId: string, expectedVersion: number, write: StatusWrite, event: Event) => number;

  constructor(db: BetterSqlite3.Database, statements: TaskStatements) {
    this.#s = statements;
    this.create = db.transaction((scope: TaskScope, task: Task) => this.#create(scope, task)).immediate;
    this.update = db.transaction((scope: TaskScope, task: Task, expectedVersion: number, event: Event) =>
      this.#update(scope, task, expectedVersion, event),
    ).immediate;
    this.artifact = db.transaction((scope: TaskScope, taskId: string, expectedVersion: number, write: ArtifactWrite, event: Event) =>
      this.#writeArtifactUpdate(scope, taskId, expectedVersion, write, event),
    ).immediate;
    this.status = db.transaction((scope: TaskScope, taskId: string, expectedVersion: number, write: StatusWrite, event: Event) =>
      this.#writeStatusUpdate(scope, taskId, expectedVersion, write, event),
    ).immediate;
  }

  #create(scope: TaskScope, task: Task): number {
    const inserted = this.#s.insertTask.run({ id: task.id, tenant: scope.tenant, owner: scope.owner, ...headColumns(task) });
    if (inserted.changes === 0) throw new TaskExistsError(task.id);
    const seq = Number(inserted.lastInsertRowid);
    this.#s.insertBody.run(seq, bodyJson(task));
    (task.artifacts ?? []).forEach((artifact, position) => this.#writeArtifact(seq, position, artifact));
    // A task is created by its `{ task }` event; a config may exist already (stored ahead by id).
    this.#logForPush(scope, task.id, 1, () => JSON.stringify({ task }));
    return 1;
  }

  /** Keeps the event for push delivery when the task has configs (nothing is written otherwise). */
  #logForPush(scope: TaskScope, taskId: string, version: number, event: string | (() => string) | undefined): void {
    if (event === undefined || this.#s.hasPushConfigs.get(taskId, scope.tenant, scope.owner) === undefined) return;
    this.#s.logPushEvent.run(taskId, version, typeof event === 'string' ? event : event());
  }

  /** The stored head of a task `scope` may write at `expectedVersion`; throws the contract's errors otherwise. */
  #writableHead(scope: TaskScope, taskId: string, expectedVersion: number): HeadRow {
    const head = this.#s.headById.get(taskId);
    if (!head || head.tenant !== scope.tenant || head.owner !== scope.owner) throw new TaskNotFoundInStoreError(taskId);
    if (head.version !== expectedVersion || isTerminal(head.state)) {
      throw new TaskVersionConflictError(taskId, expectedVersion, head.version);
    }
    return head;
  }

  #update(scope: TaskScope, task: Task, expectedVersion: number, event: Event): number {
    const head = this.#writableHead(scope, task.id, expectedVersion);
    const version = expectedVersion + 1;
    this.#replace(head, task);
    this.#s.setHead.run({ seq: head.seq, version, ...headColumns(task) });
    this.#logForPush(scope, task.id, version, event);
    return version;
  }

  /**
   * An artifact event, from the update alone: a new artifact row, one appended chunk row, or the replaced artifact. The indexed listing columns do
   * not change; only the version and the count.
   */
  #writeArtifactUpdate(scope: TaskScope, taskId: string, expectedVersion: number, write: ArtifactWrite, event: Event): number {
    const head = this.#writableHead(scope, taskId, expectedVersion);
    const version = expectedVersion + 1;
    const seq = head.seq;
    const stored = this.#s.artifactById.get(seq, write.artifactId);
    if (!fits(head, stored, write)) return this.#update(scope, snapshot(write.task), expectedVersion, event);
    let count = head.artifact_count;
    if (!stored) {
      // A new artifact goes last.
      this.#s.upsertArtifact.run(seq, count, write.artifactId, write.head, write.partCount, 1);
      this.#s.insertChunk.run(seq, count, 0, write.parts);
      count++;
    } else if (!write.append) {
      this.#s.deleteChunksAt.run(seq, stored.position);
      this.#s.upsertArtifact.run(seq, stored.position, write.artifactId, write.head, write.partCount, 1);
      this.#s.insertChunk.run(seq, stored.position, 0, write.parts);
    } else {
      this.#s.insertChunk.run(seq, stored.position, stored.chunks, write.parts);
      // A chunk with a name, description or metadata replaces those of the stored head.
      const headText = write.hasFields ? JSON.stringify({ ...JSON.parse(stored.head), ...JSON.parse(write.head), parts: [] }) : stored.head;
      this.#s.growArtifact.run(headText, stored.part_count + write.partCount, stored.chunks + 1, seq, stored.position);
    }
    this.#s.setVersion.run(version, count, seq);
    this.#logForPush(scope, taskId, version, event);
    return version;
  }

  /** A status event: the body and the listing columns; the artifact rows stay as they are. */
  #writeStatusUpdate(scope: TaskScope, taskId: string, expectedVersion: number, write: StatusWrite, event: Event): number {
    const head = this.#writableHead(scope, taskId, expectedVersion);
    // A task passed with other artifacts than stored does not fit a status change: write it whole.
    if (write.columns.artifact_count !== head.artifact_count) return this.#update(scope, snapshot(write.task), expectedVersion, event);
    const version = expectedVersion + 1;
    this.#s.setBody.run(write.body, head.seq);
    this.#s.setHead.run({ seq: head.seq, version, ...write.columns });
    this.#logForPush(scope, taskId, version, event);
    return version;
  }

  /** The whole task: its body, and each artifact that differs from the stored one. */
  #replace(head: HeadRow, task: Task): void {
    this.#s.setBody.run(bodyJson(task), head.seq);
    const artifacts = task.artifacts ?? [];
    // A status update repeats the artifacts unchanged: compare texts, so they are not rewritten.
    const stored = head.artifact_count > 0 ? artifactTexts(this.#s, head.seq) : [];
    artifacts.forEach((artifact, position) => {
      const was = stored[position];
      if (was && was.head === headJson(artifact) && was.parts === JSON.stringify(artifact.parts)) return;
      if (was) this.#s.deleteChunksAt.run(head.seq, position);
      this.#writeArtifact(head.seq, position, artifact);
    });
    if (stored.length > artifacts.length) {
      this.#s.deleteArtifactsFrom.run(head.seq, artifacts.length);
      this.#s.deleteChunksFrom.run(head.seq, artifacts.length);
    }
  }

  /** An artifact as one chunk (its position's old chunks are already gone). */
  #writeArtifact(seq: number, position: number, artifact: Artifact): void {
    this.#s.upsertArtifact.run(seq, position, artifact.artifactId, headJson(artifact), artifact.parts.length, 1);
    this.#s.insertChunk.run(seq, position, 0, JSON.stringify(artifact.parts));
  }
}
