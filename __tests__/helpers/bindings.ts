/**
 * One A2A client for both bindings, so that a suite runs over JSON-RPC and HTTP+JSON by
 * parameterising (`describe.each(BINDINGS)`), not by copying: a v1.0 method and its params in,
 * the result or an error with its JSON-RPC code out (derived from the ErrorInfo reason on HTTP+JSON).
 */
import { ERROR_TABLE } from '../../lib';
import { openStream, rpc, sseFrames, V1 } from './http';

export type Binding = 'jsonrpc' | 'rest';
export const BINDINGS: readonly Binding[] = ['jsonrpc', 'rest'];

export interface A2AErrorReply {
  /** The JSON-RPC code (on HTTP+JSON: the code of the ErrorInfo reason, else of the status). */
  readonly code: number;
  readonly message: string;
  readonly reason?: string;
}

export interface A2AReply {
  readonly status: number;
  readonly headers: Headers;
  /** The raw body, for byte-identity checks within one binding. */
  readonly text: string;
  readonly result?: any;
  readonly error?: A2AErrorReply;
}

export interface A2AStreamReply {
  readonly status: number;
  readonly headers: Headers;
  /** Every `data:` payload as sent (JSON-RPC envelopes, or StreamResponses and Status frames). */
  readonly frames: any[];
  /** StreamResponse objects, in order. */
  readonly events: any[];
  /** The error answered before the stream opened, or carried by its final frame. */
  readonly error?: A2AErrorReply;
  /** The raw body of an error answered before the stream opened. */
  readonly text?: string;
}

export interface CallOptions {
  readonly headers?: Record<string, string>;
  /** The JSON-RPC request id (a fresh one by default), for byte-identity checks; unused on HTTP+JSON. */
  readonly id?: number | string;
  readonly signal?: AbortSignal;
}

type Params = Record<string, unknown>;

const CODE_BY_REASON = new Map<string, number>(
  Object.values(ERROR_TABLE).flatMap((spec) => (spec.reason ? [[spec.reason, spec.code] as [string, number]] : [])),
);

/** A google.rpc.Status as the JSON-RPC error it stands for. */
function fromStatus(status: any): A2AErrorReply {
  const details: { '@type': string; reason?: string }[] = status.details ?? [];
  const reason = details.find((d) => d['@type'].endsWith('google.rpc.ErrorInfo'))?.reason;
  const badRequest = details.some((d) => d['@type'].endsWith('google.rpc.BadRequest'));
  const code =
    (reason ? CODE_BY_REASON.get(reason) : undefined) ??
    (badRequest ? -32602 : status.status === 'INTERNAL' || status.status === 'UNAVAILABLE' ? -32603 : status.code === 404 ? -32601 : -32600);
  return { code, message: status.message, reason };
}

/** The HTTP+JSON request for a v1.0 method and its params. */
function restRequest(method: string, params: Params): { verb: string; path: string; body?: Params } {
  const { tenant, id, ...rest } = params as Params & { tenant?: string; id?: string };
  const prefix = tenant ? `/${encodeURIComponent(tenant)}` : '';
  const task = `${prefix}/tasks/${encodeURIComponent(String(id))}`;
  const query = (values: Params) => {
    const entries = Object.entries(values).filter(([, v]) => v !== undefined);
    return entries.length ? `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)]))}` : '';
  };
  switch (method) {
    case 'SendMessage':
      return { verb: 'POST', path: `${prefix}/message:send`, body: rest };
    case 'SendStreamingMessage':
      return { verb: 'POST', path: `${prefix}/message:stream`, body: rest };
    case 'GetTask':
      return { verb: 'GET', path: `${task}${query(rest)}` };
    case 'ListTasks':
      return { verb: 'GET', path: `${prefix}/tasks${query(rest)}` };
    case 'CancelTask':
      return { verb: 'POST', path: `${task}:cancel`, body: rest };
    case 'SubscribeToTask':
      return { verb: 'POST', path: `${task}:subscribe` };
    case 'GetExtendedAgentCard':
      return { verb: 'GET', path: `${prefix}/extendedAgentCard` };
    default:
      throw new Error(`no HTTP+JSON route for ${method} in this helper`);
  }
}

function restFetch(url: string, method: string, params: Params, options: CallOptions, stream: boolean): Promise<Response> {
  const { verb, path, body } = restRequest(method, params);
  return fetch(`${url}${path}`, {
    method: verb,
    headers: {
      ...(body ? { 'Content-Type': 'application/a2a+json' } : {}),
      ...(stream ? { Accept: 'text/event-stream' } : {}),
      ...V1,
      ...options.headers,
    },
    body: body ? JSON.stringify(body) : undefined,
    signal: options.signal,
  });
}

/** The JSON-RPC helpers' options: a fixed id only when one is asked for. */
const jsonRpcOptions = ({ headers, signal, id }: CallOptions) => (id === undefined ? { headers, signal } : { headers, signal, id });

/** A client of the agent at `url` (the router's mount) over `binding`. */
export function a2aClient(binding: Binding, url: string) {
  /** Opens a streaming method; read it with `events()`. */
  const open = (method: string, params: Params, options: CallOptions = {}): Promise<Response> =>
    binding === 'jsonrpc' ? openStream(url, method, params, jsonRpcOptions(options)) : restFetch(url, method, params, options, true);

  return {
    binding,

    async call(method: string, params: Params = {}, options: CallOptions = {}): Promise<A2AReply> {
      if (binding === 'jsonrpc') {
        const reply = await rpc(url, method, params, jsonRpcOptions(options));
        const error = reply.body?.error;
        return {
          status: reply.status,
          headers: reply.headers,
          text: reply.text,
          result: reply.body?.result,
          error: error && { code: error.code, message: error.message, reason: error.data?.[0]?.reason },
        };
      }
      const response = await restFetch(url, method, params, options, false);
      const text = await response.text();
      const body = text ? JSON.parse(text) : undefined;
      if (response.ok) return { status: response.status, headers: response.headers, text, result: body };
      return { status: response.status, headers: response.headers, text, error: fromStatus(body.error) };
    },

    open,

    /** The StreamResponse objects of an open stream (an error frame ends it with `{ error }`); `frame` as sent. */
    async *events(response: Response): AsyncGenerator<{ event?: any; error?: A2AErrorReply; frame: unknown; id?: string }> {
      for await (const frame of sseFrames(response)) {
        if (frame.data === undefined) continue;
        const data = JSON.parse(frame.data);
        const id = frame.id;
        if (binding === 'jsonrpc') {
          yield data.error
            ? { frame: data, id, error: { code: data.error.code, message: data.error.message, reason: data.error.data?.[0]?.reason } }
            : { frame: data, id, event: data.result };
        } else {
          yield frame.event === 'error' ? { frame: data, id, error: fromStatus(data.error) } : { frame: data, id, event: data };
        }
      }
    },

    /** A whole streaming call, read to its end. */
    async stream(method: string, params: Params, options: CallOptions = {}): Promise<A2AStreamReply> {
      const response = await open(method, params, options);
      if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        const text = await response.text();
        const body: any = JSON.parse(text);
        return {
          status: response.status,
          headers: response.headers,
          frames: [],
          events: [],
          text,
          error:
            binding === 'jsonrpc'
              ? { code: body.error.code, message: body.error.message, reason: body.error.data?.[0]?.reason }
              : fromStatus(body.error),
        };
      }
      const events: unknown[] = [];
      const frames: unknown[] = [];
      let error: A2AErrorReply | undefined;
      for await (const item of this.events(response)) {
        frames.push(item.frame);
        if (item.error) error = item.error;
        else events.push(item.event);
      }
      return { status: response.status, headers: response.headers, frames, events, error };
    },
  };
}

export type A2AClient = ReturnType<typeof a2aClient>;
