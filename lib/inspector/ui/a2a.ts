/**
 * How the page talks: A2A requests to the agent's own URLs (plain fetch, through the app's real
 * middleware chain, with the identity chosen), the admin API with the token, and the session log.
 */
export type Binding = 'JSON-RPC' | 'HTTP+JSON';
export type Version = '1.0' | '0.3';

interface Identity {
  kind: 'anonymous' | 'bearer' | 'header';
  /** For `header`: the API key's header name (from the card's scheme). */
  header?: string;
  value?: string;
}

export const state = {
  token: '',
  agentUrl: '',
  receiverUrl: '',
  identity: { kind: 'anonymous' } as Identity,
  card: undefined as Record<string, unknown> | undefined,
};

interface LogEntry {
  at: string;
  kind: 'request' | 'response' | 'frame' | 'event';
  data: unknown;
}

/** The session: every request, response, frame and feed event, for export. */
export const sessionLog: LogEntry[] = [];
export const log = (kind: LogEntry['kind'], data: unknown) => sessionLog.push({ at: new Date().toISOString(), kind, data });

function identityHeaders(): Record<string, string> {
  const { kind, header, value } = state.identity;
  if (kind === 'bearer' && value) return { authorization: `Bearer ${value}` };
  if (kind === 'header' && header && value) return { [header]: value };
  return {};
}

export async function admin<T>(route: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`api/${route}`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), 'x-inspector-token': state.token },
  });
  if (!response.ok) throw new Error(`admin ${route}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** The v1.0 method names, and the v0.3 JSON-RPC name of each. */
export const METHODS: Record<string, string | undefined> = {
  SendMessage: 'message/send',
  SendStreamingMessage: 'message/stream',
  GetTask: 'tasks/get',
  ListTasks: undefined,
  CancelTask: 'tasks/cancel',
  SubscribeToTask: 'tasks/resubscribe',
  CreateTaskPushNotificationConfig: 'tasks/pushNotificationConfig/set',
  GetTaskPushNotificationConfig: 'tasks/pushNotificationConfig/get',
  ListTaskPushNotificationConfigs: 'tasks/pushNotificationConfig/list',
  DeleteTaskPushNotificationConfig: 'tasks/pushNotificationConfig/delete',
  GetExtendedAgentCard: 'agent/getAuthenticatedExtendedCard',
};

const STREAMING = new Set(['SendStreamingMessage', 'SubscribeToTask']);

export interface RawRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

let rpcId = 0;

/** The HTTP request for an operation; `params` in the chosen version's shape. */
export function buildRequest(op: string, params: Record<string, unknown>, binding: Binding, version: Version): RawRequest {
  const headers: Record<string, string> = { ...identityHeaders() };
  if (version === '1.0') headers['a2a-version'] = '1.0';
  if (STREAMING.has(op)) headers.accept = 'text/event-stream';
  if (binding === 'JSON-RPC') {
    const method = version === '1.0' ? op : (METHODS[op] ?? op);
    headers['content-type'] = 'application/json';
    return { method: 'POST', url: state.agentUrl, headers, body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }, null, 2) };
  }
  const root = state.agentUrl + (version === '0.3' ? '/v1' : '');
  const id = encodeURIComponent(String(params.id ?? params.taskId ?? ''));
  const post = (path: string, body: unknown): RawRequest => ({
    method: 'POST',
    url: root + path,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body, null, 2),
  });
  switch (op) {
    case 'SendMessage':
      return post('/message:send', params);
    case 'SendStreamingMessage':
      return post('/message:stream', params);
    case 'CancelTask':
      return post(`/tasks/${id}:cancel`, {});
    case 'SubscribeToTask':
      return { method: 'GET', url: `${root}/tasks/${id}:subscribe`, headers };
    case 'ListTasks':
      return { method: 'GET', url: `${root}/tasks`, headers };
    case 'GetExtendedAgentCard':
      return { method: 'GET', url: root + (version === '0.3' ? '/card' : '/extendedAgentCard'), headers };
    case 'CreateTaskPushNotificationConfig':
      return post(`/tasks/${id}/pushNotificationConfigs`, params);
    case 'ListTaskPushNotificationConfigs':
      return { method: 'GET', url: `${root}/tasks/${id}/pushNotificationConfigs`, headers };
    default:
      return { method: 'GET', url: `${root}/tasks/${id}`, headers };
  }
}

interface Frame {
  ms: number;
  data: unknown;
}

/** Sends `request`; `onFrame` hears each SSE frame as it arrives. The whole body or the frames at the end. */
export async function send(
  request: RawRequest,
  onFrame?: (frame: Frame) => void,
): Promise<{ status: number; headers: Record<string, string>; body?: unknown; frames?: Frame[]; ms: number }> {
  const started = performance.now();
  log('request', request);
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
  const headers = Object.fromEntries(response.headers.entries());
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: shown as text
    }
    const result = { status: response.status, headers, body, ms: Math.round(performance.now() - started) };
    log('response', result);
    return result;
  }
  const frames: Frame[] = [];
  await readSse(response, (data) => {
    const frame = { ms: Math.round(performance.now() - started), data };
    frames.push(frame);
    log('frame', frame);
    onFrame?.(frame);
  });
  return { status: response.status, headers, frames, ms: Math.round(performance.now() - started) };
}

/** Reads an event stream, calling `onData` with each frame's data (parsed when JSON). */
export async function readSse(response: Response, onData: (data: unknown) => void): Promise<void> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const data = block
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue;
      try {
        onData(JSON.parse(data));
      } catch {
        onData(data);
      }
    }
  }
}

/** The request as a curl command line (single-quoted for a POSIX shell). */
export function curlOf(request: RawRequest): string {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const parts = ['curl', '-N', '-X', request.method, quote(request.url)];
  for (const [name, value] of Object.entries(request.headers)) parts.push('-H', quote(`${name}: ${value}`));
  if (request.body !== undefined) parts.push('--data', quote(request.body));
  return parts.join(' ');
}

/** A v1.0 or v0.3 state name as the v1.0 one (`input-required` → `TASK_STATE_INPUT_REQUIRED`). */
export const v1State = (s: unknown): string =>
  typeof s !== 'string'
    ? ''
    : (s.startsWith('TASK_STATE_') ? s : `TASK_STATE_${s.toUpperCase().replace(/-/g, '_')}`).replace('CANCELLED', 'CANCELED');
