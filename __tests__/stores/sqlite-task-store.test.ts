/**
 * SqliteTaskStore: the store contract unchanged (a file, ':memory:', behind latency), then what is
 * particular to SQLite: WAL, migrations on reopen, indexed listing, appended artifact chunks,
 * findUnfinished, close() and the option errors.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { A2AOptionsError, InMemoryTaskStore, reduceTask, type Task, type TaskEvent, type TaskScope, type TaskState } from 'a2a-express-kit';
import { SQLITE_SCHEMA_VERSION, SqliteTaskStore, openSqliteTaskStore } from 'a2a-express-kit/sqlite';
import { describeTaskStoreContract, withLatency } from 'a2a-express-kit/testing';

const dir = mkdtempSync(path.join(tmpdir(), 'a2a-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fileIn = (name = `${randomUUID()}.sqlite`) => path.join(dir, name);

// One file shared by every contract test, as a server would use it (the suite's ids never collide).
let shared: Promise<SqliteTaskStore> | undefined;
const sharedStore = () => (shared ??= openSqliteTaskStore({ path: fileIn('contract/tasks.sqlite') }));
afterAll(async () => (await shared)?.close());

describeTaskStoreContract('SqliteTaskStore on a file', sharedStore);
describeTaskStoreContract('SqliteTaskStore on :memory:', () => openSqliteTaskStore({ path: ':memory:' }), { cleanup: (store) => store.close() });
describeTaskStoreContract('SqliteTaskStore behind withLatency', async () => withLatency(await sharedStore()));

// ---------------------------------------------------------------------------

const scope = (owner = 'alice'): TaskScope => ({ tenant: `t-${randomUUID()}`, owner });
const T0 = Date.parse('2026-02-01T00:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

function task(id: string, state: TaskState = 'TASK_STATE_WORKING', seconds = 0, extra: Partial<Task> = {}): Task {
  return {
    id,
    contextId: `ctx-${id}`,
    status: { state, timestamp: at(seconds) },
    history: [{ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }], taskId: id }],
    ...extra,
  };
}

/** A database whose prepared SQL texts are recorded, so tests can EXPLAIN what the store runs. */
function recordingDatabase(file: string) {
  const db = new Database(file);
  const prepared: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  }) as typeof db.prepare;
  return { db, prepared };
}

describe('SqliteTaskStore on SQLite', () => {
  it('opens the file in WAL mode with synchronous=NORMAL and the busy timeout', async () => {
    const file = fileIn();
    const db = new Database(file);
    const store = new SqliteTaskStore({ database: db, busyTimeoutMs: 250 });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.pragma('busy_timeout', { simple: true })).toBe(250);
    await store.close();
    db.close();
    // WAL is a property of the file: a store opened by path has it too.
    const opened = await openSqliteTaskStore({ path: file });
    const reader = new Database(file, { readonly: true });
    expect(reader.pragma('journal_mode', { simple: true })).toBe('wal');
    reader.close();
    await opened.close();
  });

  it('creates missing parent directories', async () => {
    const file = path.join(dir, 'a', 'b', 'c', 'tasks.sqlite');
    const store = await openSqliteTaskStore({ path: file });
    await store.close();
    expect(statSync(file).isFile()).toBe(true);
  });

  it('a reopened file keeps its tasks and versions, and is at the current schema version', async () => {
    const file = fileIn();
    const who = scope();
    const first = await openSqliteTaskStore({ path: file });
    const stored = task('reopen-1', 'TASK_STATE_WORKING', 1, { artifacts: [{ artifactId: 'a', parts: [{ text: 'one' }] }] });
    await first.create(who, stored);
    const next: Task = { ...stored, artifacts: [{ artifactId: 'a', parts: [{ text: 'one' }, { text: 'two' }] }] };
    await first.update(who, next, 1, {
      kind: 'artifact',
      update: { taskId: 'reopen-1', contextId: 'ctx-reopen-1', artifact: { artifactId: 'a', parts: [{ text: 'two' }] }, append: true },
    });
    await first.close();

    const second = await openSqliteTaskStore({ path: file });
    expect(await second.get(who, 'reopen-1')).toEqual({ task: next, version: 2 });
    await second.close();
    const db = new Database(file, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    db.close();
  });

  it('migrates a new database from user_version 0 and leaves the tables of others alone', async () => {
    const file = fileIn();
    const db = new Database(file);
    db.exec('CREATE TABLE app_users (id INTEGER PRIMARY KEY, name TEXT)');
    db.prepare('INSERT INTO app_users (name) VALUES (?)').run('ada');
    expect(db.pragma('user_version', { simple: true })).toBe(0);
    const store = new SqliteTaskStore({ database: db });
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all();
    expect(tables).toEqual([
      'a2a_artifact_chunks',
      'a2a_artifacts',
      'a2a_push_configs',
      'a2a_push_events',
      'a2a_task_bodies',
      'a2a_tasks',
      'app_users',
    ]);
    expect(db.prepare('SELECT name FROM app_users').pluck().get()).toBe('ada');
    // A second store on the same database does not run the steps again.
    const again = new SqliteTaskStore({ database: db });
    await store.close();
    await again.close();
    expect(db.open).toBe(true); // the user's database: the store does not close it
    db.close();
  });

  it('refuses a file of a newer schema, and a user_version that is not its own', async () => {
    const newer = fileIn();
    const store = await openSqliteTaskStore({ path: newer });
    await store.close();
    const db = new Database(newer);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    db.close();
    await expect(openSqliteTaskStore({ path: newer })).rejects.toThrow(/newer than this a2a-express-kit knows.*upgrade a2a-express-kit/);

    const foreign = new Database(fileIn());
    foreign.pragma('user_version = 7');
    expect(() => new SqliteTaskStore({ database: foreign })).toThrow(/user_version 7 but no a2a_tasks table/);
    foreign.close();
  });

  it('serves every listing shape from an index: no table scan, no sort', async () => {
    const { db, prepared } = recordingDatabase(fileIn());
    const store = new SqliteTaskStore({ database: db });
    const who = scope();
    for (let i = 0; i < 30; i++)
      await store.create(who, task(`plan-${String(i).padStart(2, '0')}`, i % 3 ? 'TASK_STATE_WORKING' : 'TASK_STATE_COMPLETED', i % 7));
    const page = await store.list(who, { pageSize: 5 });
    for (const contextId of [undefined, 'ctx-plan-01']) {
      for (const status of [undefined, 'TASK_STATE_WORKING' as const]) {
        for (const statusTimestampAfter of [undefined, at(2)]) {
          for (const pageToken of [undefined, page.nextPageToken]) {
            await store.list(who, { pageSize: 5, contextId, status, statusTimestampAfter, pageToken });
          }
        }
      }
    }
    await store.findUnfinished();
    const listings = prepared.filter((sql) => /FROM a2a_tasks WHERE tenant/.test(sql));
    expect(listings).toHaveLength(16 + 8); // a page statement per shape, a count per shape without the cursor
    const params = {
      tenant: who.tenant,
      owner: who.owner,
      contextId: 'c',
      status: 'TASK_STATE_WORKING',
      after: at(0),
      cursorTs: at(3),
      cursorId: 'x',
      limit: 6,
    };
    for (const sql of listings) {
      const names = [...sql.matchAll(/@(\w+)/g)].map((m) => m[1]);
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(Object.fromEntries(names.map((n) => [n, params[n as keyof typeof params]]))) as Array<{
        detail: string;
      }>;
      const details = plan.map((row) => row.detail);
      expect(details.filter((d) => /a2a_tasks/.test(d))).toEqual([expect.stringMatching(/^SEARCH a2a_tasks USING (COVERING )?INDEX a2a_tasks_/)]);
      expect(details.join('\n')).not.toMatch(/TEMP B-TREE/);
    }
    const unfinished = prepared.find((sql) => /WHERE state IN/.test(sql))!;
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${unfinished}`).all() as Array<{ detail: string }>).map((row) => row.detail);
    expect(plan).toEqual([expect.stringMatching(/^SEARCH a2a_tasks USING (COVERING )?INDEX a2a_tasks_unfinished/)]);
    await store.close();
    db.close();
  });

  it('an artifact chunk appends one small row: the task JSON and earlier chunks are not rewritten', async () => {
    const file = fileIn();
    const db = new Database(file);
    db.pragma('wal_autocheckpoint = 0'); // keep every frame in the WAL, so its growth is what was written
    const store = new SqliteTaskStore({ database: db });
    const who = scope();
    // A task with a 200 KB history: rewriting it per chunk would show in the WAL at once.
    const history = Array.from({ length: 1000 }, (_, i) => ({
      messageId: `m-${i}`,
      role: 'ROLE_USER' as const,
      parts: [{ text: `message ${i} `.padEnd(200, '.') }],
    }));
    let current: Task = { ...task('chunks-1'), history };
    await store.create(who, current);
    const bodyBefore = db.prepare('SELECT b.body FROM a2a_task_bodies b JOIN a2a_tasks t ON t.seq = b.task WHERE t.id = ?').pluck().get('chunks-1');
    const walBefore = statSync(`${file}-wal`).size;
    const chunks = 50;
    let version = 1;
    for (let i = 0; i < chunks; i++) {
      const event: TaskEvent = {
        artifactUpdate: {
          taskId: current.id,
          contextId: current.contextId!,
          artifact: { artifactId: 'out', parts: [{ text: `chunk ${i};` }] },
          append: i > 0,
        },
      };
      const reduced = reduceTask(current, event, { taskId: current.id, contextId: current.contextId! });
      if (!reduced.ok) throw new Error(reduced.reason);
      version = await store.update(who, reduced.task, version, reduced.change);
      current = reduced.task;
    }
    const perChunk = (statSync(`${file}-wal`).size - walBefore) / chunks;
    // Before reading: a read folds the chunks it joined into one row.
    expect(db.prepare('SELECT b.body FROM a2a_task_bodies b JOIN a2a_tasks t ON t.seq = b.task WHERE t.id = ?').pluck().get('chunks-1')).toBe(
      bodyBefore,
    );
    expect(db.prepare('SELECT count(*) FROM a2a_artifact_chunks c JOIN a2a_tasks t ON t.seq = c.task WHERE t.id = ?').pluck().get('chunks-1')).toBe(
      chunks,
    );
    expect(await store.get(who, 'chunks-1')).toEqual({ task: current, version: chunks + 1 });
    // About three pages per commit (the chunk, the artifact row, the task row), far below the 260 KB task.
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    expect(perChunk).toBeLessThanOrEqual(4 * (pageSize + 24));

    // A status update repeats the artifacts: they are compared, not rewritten.
    const chunkRows = () => db.prepare('SELECT count(*) FROM a2a_artifact_chunks').pluck().get();
    const before = chunkRows();
    const done: Task = { ...current, status: { state: 'TASK_STATE_COMPLETED', timestamp: at(9) } };
    await store.update(who, done, version, { kind: 'replace' });
    expect(chunkRows()).toBe(before);
    expect(await store.get(who, 'chunks-1')).toEqual({ task: done, version: version + 1 });
    await store.close();
    db.close();
  });

  it('folds a random event sequence exactly as the in-memory store does', async () => {
    const sqlite = await openSqliteTaskStore({ path: ':memory:' });
    const memory = new InMemoryTaskStore();
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 20; round++) {
      const who = scope();
      const id = `fold-${round}`;
      const ctx = { taskId: id, contextId: `ctx-${id}` };
      let current: Task | undefined;
      let version = 0;
      for (let step = 0; step < 40; step++) {
        const pick = random();
        const artifactId = `art-${Math.floor(random() * 3)}`;
        const event: TaskEvent =
          pick < 0.15
            ? {
                statusUpdate: {
                  ...ctx,
                  status: {
                    state: 'TASK_STATE_WORKING',
                    timestamp: at(step),
                    message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: `s${step}` }] },
                  },
                },
              }
            : pick < 0.2
              ? { statusUpdate: { ...ctx, status: { state: 'TASK_STATE_INPUT_REQUIRED', timestamp: at(step) } } }
              : pick < 0.25
                ? { userMessage: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: `u${step}` }] } }
                : {
                    artifactUpdate: {
                      ...ctx,
                      artifact: {
                        artifactId,
                        ...(random() < 0.3 ? { name: `n${step}` } : {}),
                        parts: Array.from({ length: 1 + Math.floor(random() * 2) }, (_, k) => ({ text: `${artifactId}:${step}.${k}` })),
                      },
                      append: random() < 0.7,
                    },
                  };
        const reduced = reduceTask(current, event, ctx);
        if (!reduced.ok) continue;
        if (!current) {
          await sqlite.create(who, reduced.task);
          await memory.create(who, reduced.task);
          version = 1;
        } else {
          const a = await sqlite.update(who, reduced.task, version, reduced.change);
          const b = await memory.update(who, reduced.task, version, reduced.change);
          expect(a).toBe(b);
          version = a;
        }
        current = reduced.task;
        const fromSqlite = await sqlite.get(who, id);
        expect(fromSqlite).toEqual(await memory.get(who, id));
        // Same keys in the same order, not only deep-equal: the wire JSON is the same too.
        expect(JSON.stringify(fromSqlite)).toBe(JSON.stringify(await memory.get(who, id)));
      }
    }
    await sqlite.close();
  });

  it('a change hint that does not fit the task passed still stores exactly the task passed', async () => {
    const store = await openSqliteTaskStore({ path: ':memory:' });
    const who = scope();
    const first = task('hint-1', 'TASK_STATE_WORKING', 0, { artifacts: [{ artifactId: 'a', parts: [{ text: 'x' }] }] });
    await store.create(who, first);
    const update = { taskId: 'hint-1', contextId: 'ctx-hint-1', artifact: { artifactId: 'a', parts: [{ text: 'y' }] }, append: true };
    // Claims an append, but the task passed replaced the parts and moved the status on too.
    const next: Task = {
      ...first,
      status: { state: 'TASK_STATE_WORKING', timestamp: at(5) },
      artifacts: [{ artifactId: 'a', parts: [{ text: 'z' }] }],
    };
    await store.update(who, next, 1, { kind: 'artifact', update });
    expect(await store.get(who, 'hint-1')).toEqual({ task: next, version: 2 });
    // Claims an append of one part, but the task passed grew by two.
    const grown: Task = { ...next, artifacts: [{ artifactId: 'a', parts: [{ text: 'z' }, { text: '1' }, { text: '2' }] }] };
    await store.update(who, grown, 2, { kind: 'artifact', update });
    expect(await store.get(who, 'hint-1')).toEqual({ task: grown, version: 3 });
    await store.close();
  });

  it('findUnfinished() lists every SUBMITTED or WORKING task in every scope, and nothing else', async () => {
    const store = await openSqliteTaskStore({ path: ':memory:' });
    const alice = scope('alice');
    const bob = { tenant: alice.tenant, owner: 'bob' };
    const other = scope('alice');
    await store.create(alice, task('u-1', 'TASK_STATE_SUBMITTED'));
    await store.create(bob, task('u-2', 'TASK_STATE_WORKING'));
    await store.create(other, task('u-3', 'TASK_STATE_WORKING'));
    await store.create(alice, task('u-4', 'TASK_STATE_INPUT_REQUIRED'));
    await store.create(bob, task('u-5', 'TASK_STATE_COMPLETED'));
    await store.create(other, task('u-6', 'TASK_STATE_WORKING'));
    await store.update(other, task('u-6', 'TASK_STATE_FAILED'), 1);
    const found = await store.findUnfinished();
    expect([...found].sort((a, b) => a.taskId.localeCompare(b.taskId))).toEqual([
      { scope: alice, taskId: 'u-1' },
      { scope: bob, taskId: 'u-2' },
      { scope: other, taskId: 'u-3' },
    ]);
    await store.close();
  });

  it('close() closes a file it opened, once; later calls reject', async () => {
    const store = await openSqliteTaskStore({ path: fileIn() });
    const who = scope();
    await store.create(who, task('closing'));
    await store.close();
    await store.close();
    for (const call of [
      () => store.get(who, 'closing'),
      () => store.list(who, { pageSize: 1 }),
      () => store.findUnfinished(),
      () => store.create(who, task('x')),
    ]) {
      await expect(call()).rejects.toThrow('SqliteTaskStore is closed');
    }
  });

  it('an SQLite failure is a rejection, not a store error class', async () => {
    const db = new Database(':memory:');
    const store = new SqliteTaskStore({ database: db, closeDatabase: true });
    const who = scope();
    await store.create(who, task('broken'));
    db.exec('DROP TABLE a2a_task_bodies');
    // Not rejects.toThrow: better-sqlite3's native addon keeps the SqliteError constructor of the
    // first test file in this worker that loaded it, so the error may come from another realm and
    // fail toThrow's instanceof check (this test failed whenever another SQLite file ran first).
    const failure = await store.get(who, 'broken').then(
      () => 'resolved',
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'SQLITE_ERROR', message: expect.stringMatching(/no such table/) });
    await store.close();
    expect(db.open).toBe(false);
  });

  it('rejects bad options at construction with errors that name the option', async () => {
    const db = new Database(':memory:');
    expect(() => new SqliteTaskStore({ database: {} as Database.Database })).toThrow(A2AOptionsError);
    expect(() => new SqliteTaskStore({ database: {} as Database.Database })).toThrow(
      'SqliteTaskStore: option "database": must be a better-sqlite3 Database',
    );
    expect(() => new SqliteTaskStore({ database: db, busyTimeout: 5 } as never)).toThrow(
      'option "busyTimeout" is unknown (did you mean "busyTimeoutMs"?)',
    );
    expect(() => new SqliteTaskStore({ database: db, synchronous: 'OFF' } as never)).toThrow(/option "synchronous"/);
    await expect(openSqliteTaskStore({ path: '' })).rejects.toThrow('openSqliteTaskStore: option "path"');
    db.close();
    expect(() => new SqliteTaskStore({ database: db })).toThrow('SqliteTaskStore: option "database": is closed');
    const file = fileIn();
    new Database(file).close();
    const readonly = new Database(file, { readonly: true });
    expect(() => new SqliteTaskStore({ database: readonly })).toThrow('SqliteTaskStore: option "database": is read-only');
    readonly.close();
  });

  it('says how to install better-sqlite3 when it is missing', async () => {
    jest.doMock('better-sqlite3', () => {
      throw Object.assign(new Error("Cannot find module 'better-sqlite3'"), { code: 'MODULE_NOT_FOUND' });
    });
    try {
      await expect(openSqliteTaskStore({ path: ':memory:' })).rejects.toThrow('npm install better-sqlite3@12');
    } finally {
      jest.dontMock('better-sqlite3');
    }
  });
});
