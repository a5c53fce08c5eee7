/**
 * How a task maps to SQLite rows and back as text: the row types, the JSON of a task body and an artifact head, the texts an update is turned into at
 * the call, and the join of chunk texts.
 */
import type { Artifact, Task, TaskArtifactUpdateEvent, TaskState } from '../../protocol/schemas.js';

export interface HeadRow {
  seq: number;
  tenant: string;
  owner: string;
  version: number;
  state: TaskState;
  context_id: string | null;
  status_ts: string;
  artifact_count: number;
}

export interface StoredArtifact {
  position: number;
  head: string;
  part_count: number;
  chunks: number;
}

/** An artifact update as text, made when update() is called (the clone on the way in). */
export interface ArtifactWrite {
  readonly artifactId: string;
  readonly append: boolean;
  /** The artifact's JSON with "parts": [] standing in for its parts. */
  readonly head: string;
  /** Whether it carries fields besides artifactId and parts (an append then rewrites the stored head). */
  readonly hasFields: boolean;
  readonly parts: string;
  readonly partCount: number;
  /**
   * What the task passed says the result is, as far as a few numbers tell (the task is not serialized): a change that does not fit the stored task
   * falls back to writing the whole task.
   */
  readonly fit: {
    readonly state: TaskState;
    readonly timestamp: string;
    readonly contextId: string | null;
    readonly count: number;
    readonly index: number;
    readonly partsAfter: number;
  };
  /** The task passed, for that fallback only (a caller that lies about the change). */
  readonly task: Task;
}

/** A status update as text, made when update() is called. */
export interface StatusWrite {
  readonly body: string;
  readonly columns: ReturnType<typeof headColumns>;
  /** The task passed, for the fallback of a change that does not fit. */
  readonly task: Task;
}

/** An artifact whose chunks a read joined: written back as one chunk when there were many. */
export interface JoinedArtifact {
  readonly position: number;
  readonly chunks: number;
  readonly partCount: number;
  readonly parts: string;
}

/** Chunks an artifact gathers before a read folds them into one row. */
export const COMPACT_AT = 8;

export interface ArtifactText {
  readonly position: number;
  readonly head: string;
  /** The artifact's parts as one JSON array text. */
  readonly parts: string;
  /** How many chunk rows it was joined from. */
  readonly chunks: number;
}

/**
 * A copy of what a caller passed to a write: the write commits later in the event-loop turn (group commit), and the store must keep the task as it
 * was at the call (the contract: stores copy on the way in). JSON, since that is what the store keeps anyway.
 */
export const snapshot = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

// Stand-ins keep the key order, so a task reads back with its keys where they were.
export const bodyJson = (task: Task): string => JSON.stringify(task.artifacts === undefined ? task : { ...task, artifacts: [] });
export const headJson = (artifact: Artifact): string => JSON.stringify({ ...artifact, parts: [] });

/** Whether the task passed is the stored task with the update folded in, as far as its numbers tell. */
export function fits(head: HeadRow, stored: StoredArtifact | undefined, write: ArtifactWrite): boolean {
  const { fit } = write;
  if (fit.state !== head.state || fit.timestamp !== head.status_ts || fit.contextId !== head.context_id) return false;
  if (!stored) return fit.count === head.artifact_count + 1 && fit.index === head.artifact_count && fit.partsAfter === write.partCount;
  if (fit.count !== head.artifact_count || fit.index !== stored.position) return false;
  return fit.partsAfter === (write.append ? stored.part_count : 0) + write.partCount;
}

/** An artifact update's texts, made at the call. */
export function artifactWrite(update: TaskArtifactUpdateEvent, task: Task): ArtifactWrite {
  const artifact = update.artifact;
  let hasFields = false;
  for (const key in artifact) if (key !== 'artifactId' && key !== 'parts') hasFields = true;
  const artifacts = task.artifacts ?? [];
  const index = artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
  return {
    fit: {
      state: task.status.state,
      timestamp: task.status.timestamp ?? '',
      contextId: task.contextId ?? null,
      count: artifacts.length,
      index,
      partsAfter: index < 0 ? -1 : artifacts[index].parts.length,
    },
    task,
    artifactId: artifact.artifactId,
    append: update.append === true,
    head: headJson(artifact),
    hasFields,
    parts: JSON.stringify(artifact.parts),
    partCount: artifact.parts.length,
  };
}

/** The listing and version columns of a task. */
export const headColumns = (task: Task) => ({
  state: task.status.state,
  context_id: task.contextId ?? null,
  status_ts: task.status.timestamp ?? '',
  artifact_count: task.artifacts?.length ?? 0,
});

/** Chunk texts ('[a,b]', '[c]') joined into the one array text JSON.stringify gives ('[a,b,c]'). */
export function joinChunks(chunks: readonly string[]): string {
  if (chunks.length === 1) return chunks[0];
  const inner = chunks.map((chunk) => chunk.slice(1, -1)).filter((items) => items !== '');
  return `[${inner.join(',')}]`;
}
