/**
 * The pure row helpers of SqliteTaskStore (lib/backends/sqlite/sqlite-task-rows.ts): chunk texts join
 * into the text JSON.stringify gives for the whole array, the body and head stand-ins keep key
 * order, and fits() tells an artifact change that matches the stored task from one that does not
 * (which the store then writes whole).
 */
import type { Task, TaskArtifactUpdateEvent } from 'a2a-express-kit';
import { artifactWrite, bodyJson, fits, headJson, joinChunks, type HeadRow, type StoredArtifact } from '../../lib/backends/sqlite/sqlite-task-rows';

const task = (artifacts?: Task['artifacts']): Task => ({
  id: 't-1',
  contextId: 'ctx-1',
  status: { state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T00:00:00.000Z' },
  ...(artifacts ? { artifacts } : {}),
  metadata: { last: true },
});

const head = (artifactCount: number): HeadRow => ({
  seq: 1,
  tenant: 't',
  owner: 'o',
  version: 3,
  state: 'TASK_STATE_WORKING',
  context_id: 'ctx-1',
  status_ts: '2026-01-01T00:00:00.000Z',
  artifact_count: artifactCount,
});

const update = (parts: string[], append: boolean): TaskArtifactUpdateEvent => ({
  taskId: 't-1',
  contextId: 'ctx-1',
  artifact: { artifactId: 'out', parts: parts.map((text) => ({ text })) },
  append,
});

describe('sqlite task rows', () => {
  it('joinChunks gives the text of the whole array, empty chunks included', () => {
    const chunks = [[{ text: 'a' }, { text: 'b' }], [], [{ text: 'c' }]];
    expect(joinChunks(chunks.map((chunk) => JSON.stringify(chunk)))).toBe(JSON.stringify(chunks.flat()));
    expect(joinChunks(['[1]'])).toBe('[1]');
    expect(joinChunks(['[]', '[]'])).toBe('[]');
  });

  it('bodyJson and headJson put stand-ins where the artifacts and parts were, keeping key order', () => {
    const withArtifacts = task([{ artifactId: 'out', parts: [{ text: 'x' }], name: 'n' }]);
    expect(bodyJson(withArtifacts)).toBe(JSON.stringify({ ...withArtifacts, artifacts: [] }));
    expect(Object.keys(JSON.parse(bodyJson(withArtifacts)))).toEqual(Object.keys(withArtifacts));
    expect(bodyJson(task())).toBe(JSON.stringify(task()));
    expect(headJson(withArtifacts.artifacts![0])).toBe('{"artifactId":"out","parts":[],"name":"n"}');
  });

  it('fits() accepts a new artifact or an append that the task passed agrees with', () => {
    const added = task([{ artifactId: 'out', parts: [{ text: 'a' }] }]);
    expect(fits(head(0), undefined, artifactWrite(update(['a'], false), added))).toBe(true);

    const stored: StoredArtifact = { position: 0, head: '{"artifactId":"out","parts":[]}', part_count: 1, chunks: 1 };
    const grown = task([{ artifactId: 'out', parts: [{ text: 'a' }, { text: 'b' }] }]);
    expect(fits(head(1), stored, artifactWrite(update(['b'], true), grown))).toBe(true);
  });

  it('fits() refuses a change the task passed does not agree with, so the store writes the task whole', () => {
    const stored: StoredArtifact = { position: 0, head: '{"artifactId":"out","parts":[]}', part_count: 1, chunks: 1 };
    // One part stored and one appended make two, but the task passed holds three.
    const lying = task([{ artifactId: 'out', parts: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] }]);
    expect(fits(head(1), stored, artifactWrite(update(['b'], true), lying))).toBe(false);
    // Another state than stored.
    const moved: Task = {
      ...task([{ artifactId: 'out', parts: [{ text: 'a' }, { text: 'b' }] }]),
      status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:00.000Z' },
    };
    expect(fits(head(1), stored, artifactWrite(update(['b'], true), moved))).toBe(false);
    // A new artifact the task does not hold last.
    expect(fits(head(1), undefined, artifactWrite(update(['a'], false), task([{ artifactId: 'out', parts: [{ text: 'a' }] }])))).toBe(false);
  });

  it('artifactWrite marks a chunk that carries fields besides its parts (the stored head is then rewritten)', () => {
    const plain = artifactWrite(update(['a'], true), task([{ artifactId: 'out', parts: [{ text: 'a' }] }]));
    expect(plain.hasFields).toBe(false);
    const named: TaskArtifactUpdateEvent = { ...update(['a'], true), artifact: { artifactId: 'out', name: 'Report', parts: [{ text: 'a' }] } };
    expect(artifactWrite(named, task([{ artifactId: 'out', parts: [{ text: 'a' }] }])).hasFields).toBe(true);
  });
});
