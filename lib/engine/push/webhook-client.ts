/**
 * One webhook POST over node:http(s), connected to the address the SSRF guard checked (never
 * resolved again), with the URL's host in `Host` and as the TLS server name. Redirects are not
 * followed: a 3xx is a failed attempt like any other non-2xx answer.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { WebhookTarget } from './ssrf-guard.js';

/** How one attempt ended. */
export type AttemptOutcome =
  | { readonly kind: 'delivered'; readonly status: number }
  | { readonly kind: 'rejected'; readonly status: number }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'error'; readonly code: string };

const USER_AGENT = 'a2a-express-kit push';

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
    let settled = false;
    const finish = (outcome: AttemptOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
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
      // The answer's body is not needed: read and drop it so the socket closes cleanly.
      res.resume();
      res.on('error', () => undefined);
      finish(status >= 200 && status < 300 ? { kind: 'delivered', status } : { kind: 'rejected', status });
    });
    // A whole-attempt deadline (req.setTimeout is per idle period only).
    const timer = setTimeout(() => {
      finish({ kind: 'timeout' });
      req.destroy();
    }, timeoutMs);
    timer.unref();
    const onAbort = (): void => {
      finish({ kind: 'error', code: 'ABORTED' });
      req.destroy();
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error: NodeJS.ErrnoException) => finish({ kind: 'error', code: error.code ?? error.name }));
    req.end(body);
  });
}
