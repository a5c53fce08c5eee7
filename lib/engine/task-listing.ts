/** ListTasks: one page of the caller's tasks; a page token this server did not issue is the caller's error. */
import { invalidParams } from '../errors.js';
import { LIST_TASKS_DEFAULT_PAGE_SIZE, type ListTasksRequest, type ListTasksResponse } from '../protocol/requests.js';
import { InvalidPageTokenError, type TaskScope, type TaskStore } from './seams/task-store.js';
import type { TaskReader } from './lifecycle.js';
import { withHistoryLength, withoutArtifacts } from './task-state.js';

/** One page of `scope`'s tasks in `store`; `reader` tells when start-up settlement is over and words a store failure. */
export async function listTasks(store: TaskStore, reader: TaskReader, scope: TaskScope, params: ListTasksRequest): Promise<ListTasksResponse> {
  const pageSize = params.pageSize ?? LIST_TASKS_DEFAULT_PAGE_SIZE;
  const recovering = reader.recovering;
  if (recovering) await recovering;
  let page;
  try {
    page = await store.list(scope, {
      pageSize,
      contextId: params.contextId || undefined,
      status: params.status,
      pageToken: params.pageToken || undefined,
      statusTimestampAfter: params.statusTimestampAfter ? new Date(params.statusTimestampAfter).toISOString() : undefined,
    });
  } catch (error) {
    if (error instanceof InvalidPageTokenError) {
      throw invalidParams([{ field: 'pageToken', description: 'is not a token this server issued' }]);
    }
    throw reader.storeFailure(error);
  }
  const tasks = page.tasks.map((task) => {
    const shaped = withHistoryLength(task, params.historyLength);
    return params.includeArtifacts === true ? shaped : withoutArtifacts(shaped);
  });
  return { tasks, nextPageToken: page.nextPageToken, pageSize, totalSize: page.totalSize };
}
