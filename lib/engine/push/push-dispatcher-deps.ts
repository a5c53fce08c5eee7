/** What the push dispatcher and its deliverer are built from, apart so that neither imports the other for types. */
import type { Logger } from '../../options.js';
import type { PushConfigStore } from '../seams/push-config-store.js';
import type { PushOutbox } from '../seams/push-outbox.js';
import type { SsrfGuard } from './ssrf-guard.js';
import type { AttemptOutcome } from './webhook-client.js';

/** How delivery behaves; the router's `pushNotifications` option, defaults applied. */
export interface DeliverySettings {
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly maxInFlightPerHost: number;
}

/** What a delivery attempt reports (the metrics listen here). */
export interface PushDeliveryObserver {
  /** One HTTP attempt ended; `refused`: the SSRF guard refused the address at delivery time. */
  attempt?(info: {
    readonly outcome: AttemptOutcome['kind'] | 'refused';
    readonly durationMs: number;
    readonly taskId: string;
    readonly tenant: string;
    readonly configId: string;
    /** 1 for the first attempt of this delivery. */
    readonly attempt: number;
    /** The task event's store version this delivery carries. */
    readonly version: number;
    readonly cause: string;
  }): void;
  /** A delivery exhausted its attempts: its config is now failing. */
  gaveUp?(info: { readonly taskId: string; readonly tenant: string }): void;
}

export interface PushDispatcherDeps {
  readonly configs: PushConfigStore;
  readonly outbox: PushOutbox;
  readonly guard: SsrfGuard;
  readonly logger: Logger;
  readonly settings: DeliverySettings;
  readonly observer?: PushDeliveryObserver;
}
