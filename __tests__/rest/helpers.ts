/** A small HTTP+JSON client over fetch for the REST suites: one call, or a stream read to its end. */
import { randomUUID } from 'node:crypto';
import { sseFrames, V1 } from '../helpers/http';

export interface RestReply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: any;
}

export interface RestOptions {
  /** A JSON body (serialised), or `raw` text as is. */
  readonly body?: unknown;
  readonly raw?: string;
  /** Added to (and overriding) `Content-Type: application/a2a+json` and `A2A-Version: 1.0`. */
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
}

function init(method: string, options: RestOptions): RequestInit {
  const hasBody = options.raw !== undefined || options.body !== undefined;
  return {
    method,
    headers: { ...(hasBody ? { 'Content-Type': 'application/a2a+json' } : {}), ...V1, ...options.headers },
    body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    signal: options.signal,
  };
}

/** One HTTP+JSON call to `base` + `path` (path with its leading `/` and query). */
export async function rest(base: string, method: string, path: string, options: RestOptions = {}): Promise<RestReply> {
  const response = await fetch(`${base}${path}`, init(method, options));
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** Opens a streaming call; read it with sseFrames(). */
export function openRestStream(base: string, method: string, path: string, options: RestOptions = {}): Promise<Response> {
  const request = init(method, options);
  return fetch(`${base}${path}`, { ...request, headers: { Accept: 'text/event-stream', ...(request.headers as Record<string, string>) } });
}

export interface RestStreamReply {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed `data:` payloads, in order. */
  readonly events: any[];
  /** Event names per frame ('message' when none was given). */
  readonly eventTypes: string[];
  /** A non-SSE body (an error answered before the stream opened). */
  readonly json?: any;
}

/** A whole streaming call, read to its end. */
export async function restStream(base: string, method: string, path: string, options: RestOptions = {}): Promise<RestStreamReply> {
  const response = await openRestStream(base, method, path, options);
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { status: response.status, headers: response.headers, events: [], eventTypes: [], json: await response.json() };
  }
  const events: unknown[] = [];
  const eventTypes: string[] = [];
  for await (const frame of sseFrames(response)) {
    if (frame.data === undefined) continue;
    events.push(JSON.parse(frame.data));
    eventTypes.push(frame.event);
  }
  return { status: response.status, headers: response.headers, events, eventTypes };
}

/** A SendMessageRequest body with a fresh messageId. */
export function sendBody(text: string, message: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...message }, ...extra };
}

/** The ErrorInfo of a google.rpc.Status body, if it has one. */
export function errorInfo(body: any): any {
  return body?.error?.details?.find((d: { '@type': string }) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
}

/** The BadRequest field violations of a google.rpc.Status body. */
export function fieldViolations(body: any): { field: string; description: string }[] {
  return body?.error?.details?.find((d: { '@type': string }) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest')?.fieldViolations ?? [];
}
