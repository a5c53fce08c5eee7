/**
 * ListTasks on SQLite: one prepared statement per combination of filters (so each uses its index), a keyset page after the cursor, and the count of
 * every match, read in one snapshot.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Task } from '../../protocol/schemas.js';
import {
  decodePageToken,
  encodePageToken,
  type ListTasksQuery,
  type ListingKey,
  type TaskPage,
  type TaskScope,
} from '../../engine/seams/task-store.js';
import { preparer, type SqliteStatement, type TaskStatements } from './sqlite-statements.js';
import { loadTask } from './sqlite-task-reads.js';

/** Which filters a listing has: each combination is its own statement, so each uses an index. */
interface ListShape {
  readonly contextId: boolean;
  readonly status: boolean;
  readonly after: boolean;
  readonly cursor: boolean;
}

interface ListStatements {
  readonly page: SqliteStatement<[Record<string, unknown>], { seq: number; artifact_count: number }>;
  readonly count: SqliteStatement<[Record<string, unknown>], { n: number }>;
}

/**
 * The SQL of a listing: the page (keyset after the cursor) or the count of every match. Text compares bytewise (UTF-8), so pages follow one
 * consistent order; it matches compareForListing's for every id but those mixing characters above U+FFFF with ones in U+E000-U+FFFF.
 */
function listingSql(shape: ListShape, kind: 'page' | 'count'): string {
  const where = ['tenant = @tenant', 'owner = @owner'];
  if (shape.contextId) where.push('context_id = @contextId');
  if (shape.status) where.push('state = @status');
  if (shape.after) where.push('status_ts >= @after');
  if (kind === 'page' && shape.cursor) {
    // The first term is an index range; the second only skips the cursor's own timestamp's ids.
    where.push('status_ts <= @cursorTs', '(status_ts < @cursorTs OR id > @cursorId)');
  }
  const filter = where.join(' AND ');
  return kind === 'count'
    ? `SELECT count(*) AS n FROM a2a_tasks WHERE ${filter}`
    : `SELECT seq, artifact_count FROM a2a_tasks WHERE ${filter} ORDER BY status_ts DESC, id ASC LIMIT @limit`;
}

export class SqliteTaskListing {
  readonly #prepare: ReturnType<typeof preparer>;
  readonly #s: TaskStatements;
  readonly #read: <T>(run: () => T) => T;
  readonly #pages = new Map<string, ListStatements['page']>();
  readonly #counts = new Map<string, ListStatements['count']>();

  /** `read` runs its function in one read transaction (one snapshot). */
  constructor(db: BetterSqlite3.Database, statements: TaskStatements, read: <T>(run: () => T) => T) {
    this.#prepare = preparer(db);
    this.#s = statements;
    this.#read = read;
  }

  list(scope: TaskScope, query: ListTasksQuery): TaskPage {
    const cursor: ListingKey | undefined = query.pageToken ? decodePageToken(query.pageToken) : undefined;
    const shape: ListShape = {
      contextId: query.contextId !== undefined,
      status: query.status !== undefined,
      after: query.statusTimestampAfter !== undefined,
      cursor: cursor !== undefined,
    };
    const { page, count } = this.#listStatements(shape);
    const params: Record<string, unknown> = { tenant: scope.tenant, owner: scope.owner };
    if (shape.contextId) params.contextId = query.contextId;
    if (shape.status) params.status = query.status;
    if (shape.after) params.after = query.statusTimestampAfter;
    const countParams = { ...params };
    if (cursor) Object.assign(params, { cursorTs: cursor.timestamp, cursorId: cursor.id });
    // One row past the page tells whether another page follows.
    params.limit = query.pageSize + 1;

    return this.#read(() => {
      const totalSize = count.get(countParams)?.n ?? 0;
      const tasks: Task[] = [];
      let more = false;
      // iterate(), not all(): arrays better-sqlite3 builds belong to Node's main realm, which deepStrictEqual under a test runner's VM context tells
      // apart from its own.
      for (const row of page.iterate(params)) {
        if (tasks.length === query.pageSize) more = true;
        else tasks.push(loadTask(this.#s, row.seq, this.#s.body.get(row.seq)!.body, row.artifact_count));
      }
      return { tasks, nextPageToken: more ? encodePageToken(tasks[tasks.length - 1]) : '', totalSize };
    });
  }

  #listStatements(shape: ListShape): ListStatements {
    // The count ignores the cursor: totalSize is every match, whichever page is asked for.
    const filters = `${+shape.contextId}${+shape.status}${+shape.after}`;
    let page = this.#pages.get(`${filters}${+shape.cursor}`);
    if (!page) this.#pages.set(`${filters}${+shape.cursor}`, (page = this.#prepare(listingSql(shape, 'page'))));
    let count = this.#counts.get(filters);
    if (!count) this.#counts.set(filters, (count = this.#prepare(listingSql(shape, 'count'))));
    return { page, count };
  }
}
