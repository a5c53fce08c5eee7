/** Raw console: any method, either binding; editable URL, headers and body; frames with timings; history, replay, curl. */
import { buildRequest, curlOf, METHODS, send, type Binding, type RawRequest, type Version } from '../a2a.js';
import { field, h, jsonTree, select, show } from '../dom.js';

/** The params a method's template starts from (v1.0 shape; the body stays editable). */
function templateParams(op: string, version: Version, taskId: string): Record<string, unknown> {
  const message =
    version === '1.0'
      ? { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] }
      : { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hello' }] };
  if (op === 'SendMessage' || op === 'SendStreamingMessage') return { message };
  if (op === 'ListTasks') return { pageSize: 20 };
  if (op === 'GetExtendedAgentCard') return {};
  if (op.includes('PushNotificationConfig')) return { taskId, ...(op.startsWith('Create') ? { url: 'https://example.com/webhook' } : { id: '' }) };
  return { id: taskId };
}

const headerText = (headers: Record<string, string>) =>
  Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');

function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

interface ConsoleView {
  readonly element: HTMLElement;
  /** History entries from an imported session. */
  load(requests: RawRequest[]): void;
}

export function consoleView(): ConsoleView {
  const op = select(Object.keys(METHODS), 'GetTask', { id: 'console-method' });
  const binding = select(['JSON-RPC', 'HTTP+JSON'], 'JSON-RPC', { id: 'console-binding' });
  const version = select(['1.0', '0.3'], '1.0', { id: 'console-version' });
  const taskId = h('input', { id: 'console-task', placeholder: 'task id for the template' });
  const verb = select(['POST', 'GET', 'DELETE'], 'POST', { id: 'console-verb' });
  const url = h('input', { id: 'console-url', class: 'wide' });
  const headers = h('textarea', { id: 'console-headers', rows: 4 });
  const body = h('textarea', { id: 'console-body', rows: 10 });
  const output = h('div', { class: 'panel', id: 'console-output' });
  const curl = h('pre', { id: 'console-curl', class: 'curl' });
  const history = h('ol', { id: 'console-history', class: 'history' });
  const requests: RawRequest[] = [];

  const template = () => {
    const request = buildRequest(
      op.value,
      templateParams(op.value, version.value as Version, taskId.value),
      binding.value as Binding,
      version.value as Version,
    );
    verb.value = request.method;
    url.value = request.url;
    headers.value = headerText(request.headers);
    body.value = request.body ?? '';
  };
  const current = (): RawRequest => ({
    method: verb.value as RawRequest['method'],
    url: url.value,
    headers: parseHeaders(headers.value),
    ...(verb.value === 'GET' ? {} : { body: body.value }),
  });

  const run = async (request: RawRequest) => {
    const frames = h('ol', { class: 'frames', id: 'console-frames' });
    show(output, h('p', {}, `${request.method} ${request.url} …`), frames);
    const answer = await send(request, (frame) =>
      frames.appendChild(h('li', {}, h('span', { class: 'ms' }, `+${frame.ms} ms `), jsonTree(frame.data))),
    );
    show(
      output,
      h('p', { id: 'console-status' }, `HTTP ${answer.status} in ${answer.ms} ms`),
      h('details', {}, h('summary', {}, 'Response headers'), jsonTree(answer.headers)),
      answer.frames ? frames : h('div', { id: 'console-body-out' }, jsonTree(answer.body)),
    );
    remember(request);
  };

  const remember = (request: RawRequest) => {
    requests.push(request);
    const item = h(
      'li',
      {},
      `${request.method} ${request.url.replace(/^https?:\/\/[^/]+/, '')} `,
      request.body ? h('code', {}, String((JSON.parse(request.body) as { method?: string }).method ?? '')) : null,
      ' ',
      h('button', { class: 'replay', onclick: () => void run(request) }, 'Replay'),
      h('button', { onclick: () => fill(request) }, 'Edit'),
    );
    history.prepend(item);
  };
  const fill = (request: RawRequest) => {
    verb.value = request.method;
    url.value = request.url;
    headers.value = headerText(request.headers);
    body.value = request.body ?? '';
  };

  for (const control of [op, binding, version]) control.addEventListener('change', template);
  taskId.addEventListener('input', template);
  const element = h(
    'section',
    { class: 'view', id: 'console-view' },
    h('div', { class: 'toolbar' }, field('Method', op), field('Binding', binding), field('Version', version), field('Task', taskId)),
    h('div', { class: 'toolbar' }, verb, url),
    field('Headers (A2A-Version, A2A-Extensions, Authorization, …)', headers),
    field('Body', body),
    h(
      'div',
      {},
      h(
        'button',
        { id: 'console-send', onclick: () => void run(current()).catch((e: unknown) => show(output, h('p', { class: 'bad' }, String(e)))) },
        'Send',
      ),
      ' ',
      h(
        'button',
        {
          id: 'console-copy-curl',
          onclick: () => {
            curl.textContent = curlOf(current());
            void navigator.clipboard?.writeText(curl.textContent).catch(() => undefined);
          },
        },
        'Copy as curl',
      ),
    ),
    curl,
    output,
    h('h3', {}, 'History'),
    history,
  );
  queueMicrotask(template);
  return {
    element,
    load: (imported) => {
      history.replaceChildren();
      requests.length = 0;
      for (const request of imported) remember(request);
    },
  };
}
