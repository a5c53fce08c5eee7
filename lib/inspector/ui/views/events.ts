/** Events and push: the engine's task events live, push attempts, and the test webhook receiver. */
import { buildRequest, send, state } from '../a2a.js';
import { field, h, jsonTree, select } from '../dom.js';

interface Entry {
  seq: number;
  at: string;
  kind: string;
  taskId?: string;
  data: Record<string, unknown>;
}

const KINDS = ['all', 'task-event', 'turn-started', 'turn-ended', 'cancel', 'push-attempt', 'push-gave-up', 'push-received'];

interface EventsView {
  readonly element: HTMLElement;
  onEntry(entry: Entry): void;
}

export function eventsView(): EventsView {
  const kind = select(KINDS, 'all', { id: 'events-kind' });
  const feed = h('ol', { class: 'feed', id: 'events-feed' });
  const received = h('ol', { class: 'feed', id: 'receiver-log' });
  const taskId = h('input', { id: 'receiver-task', placeholder: 'task id' });
  const result = h('div', { id: 'receiver-result' });
  const row = (entry: Entry) =>
    h(
      'li',
      { 'data-kind': entry.kind, hidden: kind.value !== 'all' && kind.value !== entry.kind },
      h('span', { class: 'ms' }, entry.at.slice(11, 23)),
      ' ',
      h('b', {}, entry.kind),
      entry.taskId ? ` task ${entry.taskId} ` : ' ',
      entry.kind === 'task-event'
        ? h('span', { class: `state ${String(entry.data.state)}` }, String(entry.data.state).replace('TASK_STATE_', ''))
        : null,
      jsonTree(entry.kind === 'task-event' ? entry.data.event : entry.data),
    );
  kind.addEventListener('change', () => {
    for (const item of feed.children) (item as HTMLElement).hidden = kind.value !== 'all' && kind.value !== (item as HTMLElement).dataset.kind;
  });
  // Registered with the chosen identity through the agent's own push config method.
  const register = async () => {
    const answer = await send(
      buildRequest('CreateTaskPushNotificationConfig', { taskId: taskId.value, url: state.receiverUrl, token: 'inspector' }, 'JSON-RPC', '1.0'),
    );
    result.replaceChildren(h('span', {}, `HTTP ${answer.status} `), jsonTree(answer.body));
  };
  return {
    element: h(
      'section',
      { class: 'view', id: 'events-view' },
      h(
        'div',
        { class: 'panel' },
        h('h3', {}, 'Test webhook receiver'),
        h(
          'p',
          {},
          'Webhook URL (the only one the SSRF guard lets through to loopback, for this process): ',
          h('code', { id: 'receiver-url' }, state.receiverUrl),
        ),
        h(
          'form',
          { class: 'inline', onsubmit: (e) => (e.preventDefault(), void register()) },
          taskId,
          h('button', { id: 'receiver-register' }, 'Send this task’s events here'),
        ),
        result,
        received,
      ),
      h('div', { class: 'panel' }, h('h3', {}, 'Engine events (what onTaskEvent sees), turns, cancels, push attempts'), field('Kind', kind), feed),
    ),
    onEntry(entry) {
      feed.prepend(row(entry));
      if (entry.kind === 'push-received') {
        received.prepend(
          h(
            'li',
            { class: 'received' },
            h('span', { class: 'ms' }, entry.at),
            ' ',
            h('b', {}, 'headers '),
            jsonTree(entry.data.headers),
            h('b', {}, ' body '),
            jsonTree(entry.data.body),
          ),
        );
      }
    },
  };
}
