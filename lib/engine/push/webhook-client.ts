/** One webhook POST to the address the SSRF guard checked (never resolved again); a 3xx fails like any non-2xx. */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { WebhookTarget } from './ssrf-guard.js';

export type AttemptOutcome =
  | { readonly kind: 'delivered'; readonly status: number }
  | { readonly kind: 'rejected'; readonly status: number }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'error'; readonly code: string };

const USER_AGENT = 'a2a-express-kit push';
/** Bytes of an answer read before closing: a normal answer ends cleanly, an endless one is cut. */
const MAX_RESPONSE_BODY_BYTES = 4096;

/** POSTs `body`; resolves once its socket is closed (so callers count open connections); `timeoutMs` bounds the exchange. */
export function postWebhook(
  target: WebhookTarget,
  body: string,
  headers: Readonly<Record<string, string>>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<AttemptOutcome> {
  const { url } = target;
  const https = url.protocol === 'https:';
  const requestHeaders: OutgoingHttpHeaders = {
    ...headers,
    host: url.host,
    'content-length': Buffer.byteLength(body),
    'user-agent': USER_AGENT,
  };
  return new Promise<AttemptOutcome>((resolve) => {
    let outcome: AttemptOutcome | undefined;
    const decide = (decided: AttemptOutcome): void => {
      outcome ??= decided;
    };
    const options = {
      method: 'POST',
      host: target.address,
      family: target.family,
      port: url.port || (https ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      headers: requestHeaders,
      // One connection per attempt: nothing pooled outlives the delivery.
      agent: false as const,
      ...(https ? { servername: target.hostname } : {}),
    };
    const req = (https ? httpsRequest : httpRequest)(options, (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      decide(status >= 200 && status < 300 ? { kind: 'delivered', status } : { kind: 'rejected', status });
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BODY_BYTES) req.destroy();
      });
      res.on('end', () => req.destroy());
      res.on('error', () => undefined);
    });
    // A whole-exchange deadline (req.setTimeout is per idle period only).
    const timer = setTimeout(() => {
      decide({ kind: 'timeout' });
      req.destroy();
    }, timeoutMs);
    timer.unref();
    const onAbort = (): void => {
      decide({ kind: 'error', code: 'ABORTED' });
      req.destroy();
    };
    // 'close' comes once the socket is closed (or was never opened), after any 'error'.
    req.on('close', () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome ?? { kind: 'error', code: 'ECONNRESET' });
    });
    req.on('error', (error: NodeJS.ErrnoException) => decide({ kind: 'error', code: error.code ?? error.name }));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    req.end(body);
  });
}
