/** Real HTTP on an ephemeral loopback port, and small JSON-RPC / SSE clients over fetch. */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';

export interface Listening {
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:0; close() also drops keep-alive connections. */
export function listen(app: { listen: (port: number, host: string, cb: () => void) => Server }): Promise<Listening> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => {
      // No server-side idle timeout (close() drops the connections): the client (fetch: 4 s without
      // a hint) always drops an idle socket first. With Node's 5 s default, a loaded run reused a
      // socket the server was closing at that instant: ECONNRESET on a request the server never
      // read (no-leaks under full-suite load).
      server.keepAliveTimeout = 0;
      const { port } = server.address() as AddressInfo;
      resolve({
        baseUrl: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

export const V1 = { 'A2A-Version': '1.0' } as const;

export interface RpcReply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: any;
}

let nextId = 1;

/** One JSON-RPC call; `id` defaults to a fresh number. */
export async function rpc(
  url: string,
  method: string,
  params?: unknown,
  options: { headers?: Record<string, string>; id?: unknown; raw?: string } = {},
): Promise<RpcReply> {
  const body = options.raw ?? JSON.stringify({ jsonrpc: '2.0', id: 'id' in options ? options.id : nextId++, method, params });
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...V1, ...options.headers },
    body,
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

export interface SseReply {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed `data:` payloads (JSON-RPC envelopes), in order. */
  readonly events: any[];
  /** Event names per frame ('message' when none was given). */
  readonly eventTypes: string[];
  readonly comments: string[];
  /** A non-SSE body (error before the stream opened). */
  readonly json?: any;
}

/** Reads SSE frames from a response as they arrive. */
export async function* sseFrames(response: Response): AsyncGenerator<{ event: string; data?: string; comment?: string; id?: string }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      let comment: string | undefined;
      let id: string | undefined;
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) comment = line.slice(1).trim();
        else if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      yield { event, data: data.length ? data.join('\n') : undefined, comment, id };
    }
  }
}

/** Opens a streaming JSON-RPC call; returns the raw response to read with sseFrames(). */
export function openStream(
  url: string,
  method: string,
  params: unknown,
  options: { headers?: Record<string, string>; id?: unknown; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...V1, ...options.headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'id' in options ? options.id : nextId++, method, params }),
    signal: options.signal,
  });
}

/** A whole streaming call, read to its end. */
export async function rpcStream(
  url: string,
  method: string,
  params: unknown,
  options: { headers?: Record<string, string>; id?: unknown } = {},
): Promise<SseReply> {
  const response = await openStream(url, method, params, options);
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { status: response.status, headers: response.headers, events: [], eventTypes: [], comments: [], json: await response.json() };
  }
  const events: unknown[] = [];
  const eventTypes: string[] = [];
  const comments: string[] = [];
  for await (const frame of sseFrames(response)) {
    if (frame.comment !== undefined && frame.data === undefined) comments.push(frame.comment);
    if (frame.data !== undefined) {
      events.push(JSON.parse(frame.data));
      eventTypes.push(frame.event);
    }
  }
  return { status: response.status, headers: response.headers, events, eventTypes, comments };
}

/** A user message with a fresh messageId. */
export function userMessage(text: string, extra: Record<string, unknown> = {}) {
  return { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra } };
}
