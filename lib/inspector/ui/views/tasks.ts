/** Tasks, live: every task this process committed events for, filtered and paged; details and actions. */
import { admin, buildRequest, send } from '../a2a.js';
import { field, h, jsonTree, select, show } from '../dom.js';
import { partsOf, partView } from './parts.js';

type Json = Record<string, unknown>;
interface Row {
  taskId: string;
  tenant: string;
  owner: string;
  contextId: string;
  state: string;
  updated: string;
  version: number;
}
interface Entry {
  seq: number;
  at: string;
  kind: string;
  taskId?: string;
  data: Json;
}

const STATES = ['', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED', 'AUTH_REQUIRED', 'COMPLETED', 'FAILED', 'CANCELED', 'REJECTED'];
const PAGE = 20;

interface TasksView {
  readonly element: HTMLElement;
  onEntry(entry: Entry): void;
}

export function tasksView(): TasksView {
  const state = select(STATES, '', { id: 'tasks-state' });
  const context = h('input', { id: 'tasks-context', placeholder: 'context id' });
  const owner = h('input', { id: 'tasks-owner', placeholder: 'owner' });
  const tenant = h('input', { id: 'tasks-tenant', placeholder: 'tenant' });
  const since = h('input', { id: 'tasks-since', type: 'datetime-local' });
  const table = h('tbody', { id: 'tasks-rows' });
  const pager = h('span', { id: 'tasks-pager' });
  const detail = h('div', { class: 'panel', id: 'task-detail' }, 'Pick a task.');
  let offset = 0;
  let selected: Row | undefined;
  let refreshing: Promise<void> | undefined;
  let again = false;

  const query = () => {
    const q = new URLSearchParams({ offset: String(offset), limit: String(PAGE) });
    if (state.value) q.set('state', `TASK_STATE_${state.value}`);
    if (context.value) q.set('contextId', context.value);
    if (owner.value) q.set('owner', owner.value);
    if (tenant.value) q.set('tenant', tenant.value);
    if (since.value) q.set('since', new Date(since.value).toISOString());
    return q;
  };

  const load = async () => {
    const page = await admin<{ tasks: Row[]; total: number }>(`tasks?${query().toString()}`);
    show(
      table,
      page.tasks.map((row) =>
        h(
          'tr',
          { 'data-task': row.taskId, class: selected?.taskId === row.taskId ? 'selected' : undefined, onclick: () => void open(row) },
          h('td', {}, h('span', { class: `state ${row.state}` }, row.state.replace('TASK_STATE_', ''))),
          h('td', {}, row.taskId),
          h('td', {}, row.contextId),
          h('td', {}, row.owner || '(anonymous)'),
          h('td', {}, row.tenant || '–'),
          h('td', {}, row.updated),
        ),
      ),
    );
    show(pager, `${page.total === 0 ? 0 : offset + 1}–${Math.min(offset + PAGE, page.total)} of ${page.total}`);
  };
  /** One load at a time; events arriving meanwhile cause one more. */
  const refresh = () => {
    if (refreshing) {
      again = true;
      return;
    }
    refreshing = load()
      .catch(() => undefined)
      .finally(() => {
        refreshing = undefined;
        if (again) {
          again = false;
          refresh();
        }
      });
  };

  let stream = h('ol', { class: 'frames', id: 'task-stream' });
  const open = async (row: Row) => {
    // A re-draw of the same task keeps what its subscription has shown.
    if (selected?.taskId !== row.taskId) stream = h('ol', { class: 'frames', id: 'task-stream' });
    selected = row;
    const q = new URLSearchParams({ tenant: row.tenant, owner: row.owner, id: row.taskId });
    const found = await admin<{ task: Json; version: number; pushConfigs: Json[]; events: Entry[] }>(`task?${q.toString()}`);
    const task = found.task;
    const followUp = h('input', { id: 'task-follow-up', placeholder: 'Follow-up message' });
    const act = async (op: string, params: Json) => {
      const answer = await send(buildRequest(op, params, 'JSON-RPC', '1.0'), (frame) =>
        stream.appendChild(h('li', {}, `+${frame.ms} ms `, jsonTree(frame.data))),
      );
      if (answer.body !== undefined) stream.appendChild(h('li', { class: 'answer' }, `HTTP ${answer.status} `, jsonTree(answer.body)));
    };
    show(
      detail,
      h('h3', {}, `Task ${row.taskId} `, h('small', {}, `version ${found.version}`)),
      h(
        'div',
        { class: 'toolbar' },
        h('button', { id: 'task-cancel', onclick: () => void act('CancelTask', { id: row.taskId }) }, 'Cancel'),
        h('button', { id: 'task-subscribe', onclick: () => void act('SubscribeToTask', { id: row.taskId }) }, 'Subscribe'),
        h(
          'form',
          {
            class: 'inline',
            onsubmit: (e) => {
              e.preventDefault();
              const message = {
                messageId: crypto.randomUUID(),
                role: 'ROLE_USER',
                taskId: row.taskId,
                contextId: row.contextId,
                parts: [{ text: followUp.value }],
              };
              void act('SendStreamingMessage', { message });
            },
          },
          followUp,
          h('button', {}, 'Follow up'),
        ),
      ),
      h('p', { class: 'hint' }, 'Actions go to the agent with the identity chosen above: another owner’s task answers TaskNotFound.'),
      stream,
      h('h4', {}, 'Status timeline'),
      h(
        'ol',
        { class: 'timeline', id: 'task-timeline' },
        found.events
          .filter((e) => e.kind === 'task-event')
          .map((e) =>
            h(
              'li',
              {},
              `${e.at} `,
              h('span', { class: `state ${String(e.data.state)}` }, String(e.data.state).replace('TASK_STATE_', '')),
              ` v${String(e.data.version)}`,
            ),
          ),
      ),
      h('h4', {}, 'History'),
      ((task.history as Json[] | undefined) ?? []).map((m) =>
        h('div', { class: `message ${String(m.role)}` }, h('span', { class: 'meta' }, String(m.role)), partsOf(m).map(partView)),
      ),
      h('h4', {}, 'Artifacts'),
      ((task.artifacts as Json[] | undefined) ?? []).map((a) =>
        h('div', { class: 'artifact' }, h('span', { class: 'meta' }, String(a.name ?? a.artifactId)), ((a.parts as Json[]) ?? []).map(partView)),
      ),
      h('h4', {}, 'Push configs'),
      found.pushConfigs.length ? jsonTree(found.pushConfigs) : 'none',
      h('h4', {}, 'Delivery attempts and notifications'),
      h(
        'ol',
        { class: 'attempts' },
        found.events.filter((e) => e.kind.startsWith('push-')).map((e) => h('li', {}, `${e.at} ${e.kind} `, jsonTree(e.data))),
      ),
    );
  };

  for (const control of [state, context, owner, tenant, since]) control.addEventListener('change', () => ((offset = 0), refresh()));
  refresh();
  return {
    element: h(
      'section',
      { class: 'view', id: 'tasks-view' },
      h(
        'div',
        { class: 'toolbar' },
        field('State', state),
        field('Context', context),
        field('Owner', owner),
        field('Tenant', tenant),
        field('Updated since', since),
      ),
      h(
        'div',
        { class: 'toolbar' },
        h('button', { onclick: () => ((offset = Math.max(0, offset - PAGE)), refresh()) }, '‹ Newer'),
        pager,
        h('button', { onclick: () => ((offset += PAGE), refresh()) }, 'Older ›'),
      ),
      h(
        'table',
        { class: 'tasks' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['State', 'Task', 'Context', 'Owner', 'Tenant', 'Updated'].map((c) => h('th', {}, c)),
          ),
        ),
        table,
      ),
      detail,
    ),
    onEntry(entry) {
      if (entry.kind !== 'task-event' && !entry.kind.startsWith('push-')) return;
      refresh();
      if (selected && entry.taskId === selected.taskId) void open(selected).catch(() => undefined);
    },
  };
}
