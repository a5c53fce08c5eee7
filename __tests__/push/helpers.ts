/** Push config calls over either binding (raw HTTP), and an agent the push suites share. */
import { rpc, V1 } from '../helpers/http';
import type { Binding } from '../helpers/bindings';
import type { AgentExecutor, Logger } from '../../lib';
import type { Deferred } from '../helpers/async';

export interface PushReply {
  readonly status: number;
  /** The raw body, for byte-identity checks within one binding. */
  readonly text: string;
  readonly result?: any;
  /** JSON-RPC: the error object; HTTP+JSON: the google.rpc.Status. */
  readonly error?: any;
}

type Params = { taskId: string; id?: string; tenant?: string; [field: string]: unknown };

/** One of the four push methods over `binding`, with `headers` (the caller). */
export async function pushCall(
  binding: Binding,
  url: string,
  method: string,
  params: Params,
  headers: Record<string, string> = {},
  id?: number,
): Promise<PushReply> {
  if (binding === 'jsonrpc') {
    const reply = await rpc(url, method, params, { headers, ...(id === undefined ? {} : { id }) });
    return { status: reply.status, text: reply.text, result: reply.body?.result, error: reply.body?.error };
  }
  const { taskId, id: configId, tenant, ...body } = params;
  const base = `${url}${tenant ? `/${encodeURIComponent(tenant)}` : ''}/tasks/${encodeURIComponent(taskId)}/pushNotificationConfigs`;
  const one = `${base}/${encodeURIComponent(String(configId))}`;
  const request: Record<string, { verb: string; path: string; body?: unknown }> = {
    CreateTaskPushNotificationConfig: { verb: 'POST', path: base, body: configId === undefined ? body : { ...body, id: configId } },
    GetTaskPushNotificationConfig: { verb: 'GET', path: one },
    ListTaskPushNotificationConfigs: { verb: 'GET', path: base },
    DeleteTaskPushNotificationConfig: { verb: 'DELETE', path: one },
  };
  const { verb, path, body: payload } = request[method];
  const response = await fetch(path, {
    method: verb,
    headers: { ...(payload ? { 'Content-Type': 'application/a2a+json' } : {}), ...V1, ...headers },
    body: payload ? JSON.stringify(payload) : undefined,
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : undefined;
  return response.ok ? { status: response.status, text, result: parsed } : { status: response.status, text, error: parsed?.error };
}

/** The ErrorInfo reason of a reply's error, on either binding. */
export function reasonOf(reply: PushReply): string | undefined {
  const details: { '@type': string; reason?: string }[] = reply.error?.details ?? reply.error?.data ?? [];
  return details.find((d) => d['@type'].endsWith('google.rpc.ErrorInfo'))?.reason;
}

/**
 * 'park': asks for input (a live, non-terminal task); 'report': working, two artifact chunks,
 * completed; 'wait': working, then waits for `gate` before an artifact and completing.
 */
export function pushAgent(gate: () => Deferred<void>): AgentExecutor {
  return {
    async execute(ctx, events) {
      if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') return events.complete(`got ${ctx.userText}`);
      switch (ctx.userText) {
        case 'park':
          return events.requireInput('more?');
        case 'report':
          await events.start('working');
          await events.artifact({ artifactId: 'a-1', text: 'one' });
          await events.artifact({ artifactId: 'a-1', text: 'two', append: true, lastChunk: true });
          return events.complete('done');
        case 'wait':
          await events.start('working');
          await gate().promise;
          await events.artifact({ artifactId: 'late', text: 'late' });
          return events.complete('finished');
        default:
          return events.reject('unknown');
      }
    },
  };
}

/** A logger that keeps every line (level, fields, message). */
export function recordingLogger(): Logger & { lines: { level: string; fields: Record<string, unknown>; message: string }[] } {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at =
    (level: string) =>
    (fields: unknown, message?: string): void => {
      if (typeof fields === 'string') lines.push({ level, fields: {}, message: fields });
      else lines.push({ level, fields: (fields ?? {}) as Record<string, unknown>, message: message ?? '' });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } as never;
}
