/**
 * Push delivery metrics: attempts by outcome, their duration, and deliveries given up. Fed by the dispatcher's observer; names are listed in
 * A2A_METRICS with the others.
 */
import type { PushDeliveryObserver } from '../engine/push/push-dispatcher-deps.js';
import type { CounterLike, HistogramLike, MeterLike, MetricAttributesLike } from './meter.js';

export const PUSH_METRICS = {
  /** Counter, `{attempt}`: webhook requests made; attribute `a2a.push.outcome` (delivered, rejected, timeout, error, refused). */
  attempts: 'a2a.push.attempts',
  /** Histogram, `s`: duration of one attempt (address check, host slot wait and request); attribute `a2a.push.outcome`. */
  attemptDuration: 'a2a.push.attempt.duration',
  /** Counter, `{delivery}`: deliveries given up after the last attempt (their config is marked failing). */
  failures: 'a2a.push.failures',
} as const;

// Webhooks answer in milliseconds; a dead one takes the whole timeout (10 s by default).
const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface PushInstruments {
  readonly attempts: CounterLike;
  readonly attemptDuration: HistogramLike;
  readonly failures: CounterLike;
}

export function pushInstruments(meter: MeterLike): PushInstruments {
  return {
    attempts: meter.createCounter(PUSH_METRICS.attempts, { description: 'Push notification webhook requests, by outcome', unit: '{attempt}' }),
    attemptDuration: meter.createHistogram(PUSH_METRICS.attemptDuration, {
      description: 'Duration of one push notification attempt',
      unit: 's',
      advice: { explicitBucketBoundaries: ATTEMPT_BUCKETS },
    }),
    failures: meter.createCounter(PUSH_METRICS.failures, { description: 'Push notifications given up after the last attempt', unit: '{delivery}' }),
  };
}

/** The dispatcher observer recording into the instruments once they exist. */
export function pushMetricsObserver(current: () => PushInstruments | undefined): PushDeliveryObserver {
  const attributes = new Map<string, MetricAttributesLike>();
  const outcomeOf = (outcome: string): MetricAttributesLike => {
    let value = attributes.get(outcome);
    if (!value) attributes.set(outcome, (value = Object.freeze({ 'a2a.push.outcome': outcome })));
    return value;
  };
  return {
    attempt({ outcome, durationMs }) {
      const instruments = current();
      if (!instruments) return;
      instruments.attempts.add(1, outcomeOf(outcome));
      instruments.attemptDuration.record(durationMs / 1000, outcomeOf(outcome));
    },
    gaveUp() {
      current()?.failures.add(1);
    },
  };
}
