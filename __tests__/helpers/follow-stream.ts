/**
 * Reads an SSE response to its end and says when its first data frame arrived: a test that must act
 * once a subscription is open awaits `firstEvent` (the server sends the task snapshot only after it
 * subscribed) instead of sleeping.
 */
import { sseFrames } from './http';

export interface FollowedStream {
  /** Resolves with the first data frame's JSON; rejects when the answer is not a stream or ends empty. */
  readonly firstEvent: Promise<unknown>;
  /** Every data frame's JSON and event name, once the stream ended. */
  readonly ended: Promise<{ events: any[]; eventTypes: string[] }>;
}

export function followStream(response: Promise<Response>): FollowedStream {
  let first!: (event: unknown) => void;
  let none!: (error: Error) => void;
  const firstEvent = new Promise<unknown>((resolve, reject) => {
    first = resolve;
    none = reject;
  });
  const ended = (async () => {
    const opened = await response;
    if (!(opened.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      throw new Error(`not a stream: HTTP ${opened.status} ${await opened.text()}`);
    }
    const events: any[] = [];
    const eventTypes: string[] = [];
    for await (const frame of sseFrames(opened)) {
      if (frame.data === undefined) continue;
      events.push(JSON.parse(frame.data));
      eventTypes.push(frame.event);
      if (events.length === 1) first(events[0]);
    }
    return { events, eventTypes };
  })();
  ended.then(
    () => none(new Error('the stream ended without an event')),
    (error: Error) => none(error),
  );
  return { firstEvent, ended };
}
