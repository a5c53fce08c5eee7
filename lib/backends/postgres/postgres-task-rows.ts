/**
 * How a task maps to rows: its listing columns, its JSON without artifact parts (an "artifacts": [] stand-in keeps the key where it was), one row per
 * artifact (its JSON with "parts": []) and its parts as appended chunks (a JSON array each); and the SQL that reads a task back in one row.
 */
import type { Artifact, Task } from '../../protocol/schemas.js';
import { isTerminal } from '../../engine/task-state.js';

/** The columns a write sets besides the version: ($state, $terminal, $context_id, $status_ts, $body). */
export const headValues = (task: Task): [string, boolean, string | null, string, string] => [
  task.status.state,
  isTerminal(task.status.state),
  task.contextId ?? null,
  task.status.timestamp ?? '',
  bodyJson(task),
];

const bodyJson = (task: Task): string => JSON.stringify(task.artifacts ? { ...task, artifacts: [] } : task);

export const headJson = (artifact: Artifact): string => JSON.stringify({ ...artifact, parts: [] });

/** Artifacts as the JSON of a `json_to_recordset(...) AS a(p int, id text, head text, n int, parts text)`. */
export const artifactRecords = (artifacts: ReadonlyArray<{ position: number; artifact: Artifact }>): string =>
  JSON.stringify(
    artifacts.map(({ position, artifact }) => ({
      p: position,
      id: artifact.artifactId,
      head: headJson(artifact),
      n: artifact.parts.length,
      parts: JSON.stringify(artifact.parts),
    })),
  );

export const ARTIFACT_RECORD = 'a(p integer, id text, head text, n integer, parts text)';

/** SQL select-list: `version`, `body` and `artifacts` (null, or [[head, [chunk, ...]], ...] in order) of task row alias `t`. */
export const loadColumns = (artifactsTable: string, chunksTable: string): string => `t.version, t.body,
  CASE WHEN t.artifact_count > 0 THEN (
    SELECT json_agg(json_build_array(a.head, (
      SELECT json_agg(c.parts ORDER BY c.chunk) FROM ${chunksTable} c WHERE c.task_id = a.task_id AND c.position = a.position
    )) ORDER BY a.position) FROM ${artifactsTable} a WHERE a.task_id = t.id
  ) END AS artifacts`;

export interface LoadedRow {
  readonly version: number;
  readonly body: string;
  readonly artifacts: Array<[string, string[] | null]> | null;
}

/** A fresh Task from its row: the caller owns every object. */
export function taskFromRow(row: LoadedRow): Task {
  const task = JSON.parse(row.body) as Task;
  if (row.artifacts) {
    task.artifacts = row.artifacts.map(([head, chunks]) => {
      const artifact = JSON.parse(head) as Artifact;
      artifact.parts = JSON.parse(joinChunks(chunks ?? [])) as Artifact['parts'];
      return artifact;
    });
  }
  return task;
}

/** The JSON arrays of an artifact's chunks as one array text (what JSON.stringify of all its parts gives). */
export function joinChunks(chunks: readonly string[]): string {
  if (chunks.length === 1) return chunks[0];
  const inner = chunks.map((chunk) => chunk.slice(1, -1)).filter((text) => text.length > 0);
  return `[${inner.join(',')}]`;
}
