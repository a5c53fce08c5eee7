/** One delivery's attempts: the config read per attempt, POST through the SSRF guard and host limit, backoff. */
import type { StoredPushConfig } from '../seams/push-config-store.js';
import type { PushDelivery } from '../seams/push-outbox.js';
import type { HostLimiter } from './host-limiter.js';
import type { DeliverySettings, PushDeliveryObserver, PushDispatcherDeps } from './push-dispatcher-deps.js';
import { WebhookRefusedError } from './ssrf-guard.js';
import { postWebhook, type AttemptOutcome } from './webhook-client.js';

const TOKEN_HEADER = 'X-A2A-Notification-Token';

/** Its `traceparent` goes with the request. */
export interface PushAttemptTrace {
  readonly traceparent: string | undefined;
  end(outcome: AttemptOutcome['kind'] | 'refused', status: number | undefined, host: string | undefined): void;
}

/** An observer that also traces attempts (lib/observability/push-spans.ts). */
export interface PushAttemptTracing {
  traceAttempt?(info: { readonly taskId: string; readonly configId: string; readonly attempt: number }): PushAttemptTrace | undefined;
}

/** One delivery at a time (the dispatcher keeps the order); stops when `signal` aborts. */
export class PushDeliverer {
  readonly #deps: PushDispatcherDeps;
  readonly #hosts: HostLimiter;
  readonly #signal: AbortSignal;

  constructor(deps: PushDispatcherDeps, hosts: HostLimiter, signal: AbortSignal) {
    this.#deps = deps;
    this.#hosts = hosts;
    this.#signal = signal;
  }

  /** Health logged when it changes, not per event (a busy dead receiver). */
  async deliver(delivery: PushDelivery): Promise<void> {
    const { configs, settings, logger, observer } = this.#deps;
    const signal = this.#signal;
    let attempts = delivery.attempts;
    for (;;) {
      if (signal.aborted) return;
      // Read per attempt: a deleted config gets nothing more (§3.1.10), a changed one the new values.
      const config = await configs.get(delivery.scope, delivery.taskId, delivery.configId);
      if (!config) return;
      const limit = config.failing ? Math.min(attempts + 1, settings.maxAttempts) : settings.maxAttempts;
      const { outcome, cause } = await this.#attempt(config, delivery, attempts + 1);
      attempts++;
      // The URL's origin only: a path or query may carry secrets.
      if (outcome === 'delivered') {
        if (config.failing) {
          await configs.setFailing(delivery.scope, delivery.taskId, config.id, false);
          logger.info(
            { taskId: delivery.taskId, configId: config.id, webhook: originOf(config.url) },
            'push notifications delivered again; the config is no longer failing',
          );
        }
        return;
      }
      if (attempts >= limit) {
        observer?.gaveUp?.({ taskId: delivery.taskId, tenant: delivery.scope.tenant });
        const fields = { taskId: delivery.taskId, configId: config.id, webhook: originOf(config.url), attempts, outcome, cause };
        if (!config.failing) {
          await configs.setFailing(delivery.scope, delivery.taskId, config.id, true);
          logger.warn(fields, `push notification not delivered after the last attempt (${cause}); the config is marked failing`);
        } else {
          logger.debug(fields, 'push notification to a failing config not delivered');
        }
        return;
      }
      await this.#deps.outbox.recordAttempts(delivery.id, attempts);
      if (!(await sleep(backoff(attempts, settings), signal))) return;
    }
  }

  /** One HTTP attempt; the host slot is held until its socket closes, so the limit bounds open connections. */
  async #attempt(
    config: StoredPushConfig,
    delivery: PushDelivery,
    attempt: number,
  ): Promise<{ outcome: AttemptOutcome['kind'] | 'refused'; cause: string }> {
    const { guard, settings, logger, observer } = this.#deps;
    const started = performance.now();
    const trace = (observer as (PushDeliveryObserver & PushAttemptTracing) | undefined)?.traceAttempt?.({
      taskId: delivery.taskId,
      configId: config.id,
      attempt,
    });
    let outcome: AttemptOutcome['kind'] | 'refused';
    let cause: string;
    let status: number | undefined;
    let host: string | undefined;
    try {
      const target = await guard.resolve(config.url);
      host = target.url.hostname;
      const release = await this.#hosts.acquire(target.url.origin);
      try {
        const result = await postWebhook(
          target,
          delivery.body,
          headersOf(config, delivery.contentType, trace?.traceparent),
          settings.timeoutMs,
          this.#signal,
        );
        outcome = result.kind;
        if ('status' in result) status = result.status;
        cause = causeOf(result, settings.timeoutMs);
        logger.debug(
          {
            taskId: delivery.taskId,
            configId: config.id,
            version: delivery.version,
            webhook: target.url.origin,
            outcome,
            ...('status' in result ? { status: result.status } : {}),
          },
          'push notification attempt',
        );
      } finally {
        release();
      }
    } catch (error) {
      if (!(error instanceof WebhookRefusedError)) throw error;
      // Refused now (DNS rebinding) or no longer resolving.
      outcome = 'refused';
      cause = `refused by the SSRF guard: ${error.message}`;
      logger.debug({ taskId: delivery.taskId, configId: config.id, reason: error.message }, 'push notification attempt refused by the SSRF guard');
    }
    observer?.attempt?.({
      outcome,
      durationMs: performance.now() - started,
      taskId: delivery.taskId,
      tenant: delivery.scope.tenant,
      configId: config.id,
      attempt,
      version: delivery.version,
      cause,
    });
    trace?.end(outcome, status, host);
    return { outcome, cause };
  }
}

function headersOf(config: StoredPushConfig, contentType: string, traceparent: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (traceparent) headers.traceparent = traceparent;
  const auth = config.authentication;
  if (auth?.credentials) headers.authorization = `${auth.scheme} ${auth.credentials}`;
  if (config.token) headers[TOKEN_HEADER] = config.token;
  return headers;
}

/** Exponential backoff with jitter: between half and all of base·2^(n-1), capped; spreads retries of many tasks. */
function backoff(attempts: number, settings: DeliverySettings): number {
  const ceiling = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** (attempts - 1));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    timer.unref();
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function causeOf(result: AttemptOutcome, timeoutMs: number): string {
  switch (result.kind) {
    case 'delivered':
    case 'rejected':
      return `HTTP ${result.status}`;
    case 'timeout':
      return `no answer within ${timeoutMs} ms`;
    case 'error':
      return result.code;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}
