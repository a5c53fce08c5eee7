/**
 * Reading a task back from its rows (the body, then each artifact's head with its chunks joined) and compaction: an artifact a read joined from many
 * chunks is written back as one.
 */
import type { Artifact, Task } from '../../protocol/schemas.js';
import { COMPACT_AT, joinChunks, type ArtifactText, type JoinedArtifact } from './sqlite-task-rows.js';
import type { TaskStatements } from './sqlite-statements.js';

/** A fresh Task from its rows: the caller owns every object. `joined` collects artifacts worth compacting. */
export function loadTask(s: TaskStatements, seq: number, body: string, artifactCount: number, joined?: JoinedArtifact[]): Task {
  const task = JSON.parse(body) as Task;
  if (artifactCount > 0) {
    task.artifacts = artifactTexts(s, seq).map(({ position, head, parts, chunks }) => {
      const artifact = JSON.parse(head) as Artifact;
      artifact.parts = JSON.parse(parts) as Artifact['parts'];
      if (joined && chunks >= COMPACT_AT) joined.push({ position, chunks, partCount: artifact.parts.length, parts });
      return artifact;
    });
  }
  return task;
}

/** Each stored artifact of task `seq` as texts, in order: its head and its chunks joined. */
export function artifactTexts(s: TaskStatements, seq: number): ArtifactText[] {
  // Rows come ordered by position, then chunk: group them per artifact.
  const grouped: Array<{ position: number; head: string; chunks: string[] }> = [];
  for (const row of s.artifactChunks.iterate(seq)) {
    const last = grouped[grouped.length - 1];
    if (last?.position === row.position) last.chunks.push(row.parts);
    else grouped.push({ position: row.position, head: row.head, chunks: [row.parts] });
  }
  return grouped.map(({ position, head, chunks }) => ({ position, head, parts: joinChunks(chunks), chunks: chunks.length }));
}

/** Writes back artifacts a read joined, as one chunk each, unless the task was written meanwhile. */
export function compact(s: TaskStatements, seq: number, version: number, joined: readonly JoinedArtifact[]): void {
  if (s.versionOf.get(seq)?.version !== version) return;
  for (const artifact of joined) {
    s.deleteChunksAt.run(seq, artifact.position);
    s.insertChunk.run(seq, artifact.position, 0, artifact.parts);
    s.setChunks.run(1, seq, artifact.position);
  }
}
