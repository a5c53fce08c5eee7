/**
 * A TaskEventBus on Redis, for replicas sharing one Redis. publish() appends the committed event to
 * the task's stream with the entry id `<version>-0` (so Redis itself refuses a version at or below
 * the last one, and the SSE event id is the version) and PUBLISHes it on the task's channel, in one
 * script. A process follows a task's channel only while it has subscribers for it, on one
 * subscriber connection per bus. A new subscription first reads the stream from where it stood when
 * subscribe() was called, so nothing published while the SUBSCRIBE travels is missed; the same
 * catch-up runs after a reconnect. history() serves SSE resumption from the stream. A RedisTaskStore
 * given this bus (`eventBus`, as createRedisBackend does) appends and publishes each event in its
 * own write script; publish() then skips the versions that store appended in this process and
 * still publishes everything else.
 */
import { z } from 'zod';
import { consoleLogger, type Logger } from '../../logger.js';
import { parseOptions } from '../../options.js';
import type { CommittedEvent, CommittedEventListener, TaskEventBus } from '../../engine/seams/task-event-bus.js';
import { RedisChannels, type ChannelHandle } from './redis-channels.js';
import type { RedisClient } from './redis-client.js';
import { TaskEventStreams, APPEND_EVENT_LUA } from './redis-event-stream.js';
import { RedisKeys } from './redis-keys.js';
import { clientSchema, keyPrefixSchema, loggerSchema, millisecondsSchema } from './redis-options.js';
import { RedisScript } from './redis-script.js';

export interface RedisTaskEventBusOptions {
  /** A connected node-redis client for commands; the bus duplicates it for its subscriptions and does not close it. */
  readonly client: RedisClient;
  /** Put before every key and channel. Default 'a2a:'. */
  readonly keyPrefix?: string;
  /** How long a task's events stay resumable after its last one. Default 3600000 (1 h). */
  readonly streamRetentionMs?: number;
  /** About how many of a task's latest events stay resumable (trimmed approximately). Default 200. */
  readonly streamMaxLength?: number;
  /** Subscriber connection trouble is reported here. Default: the console. */
  readonly logger?: Logger;
}

const optionsSchema = z.strictObject({
  client: clientSchema,
  keyPrefix: keyPrefixSchema,
  streamRetentionMs: millisecondsSchema(1000).default(3_600_000),
  streamMaxLength: z.number().int().min(1).max(1_000_000).default(200),
  logger: loggerSchema.default(consoleLogger),
});

// KEYS: the stream. ARGV: version, payload, max length, retention ms, channel. Replies 0 when the
// stream has that version (or a later one) already, so nothing happens.
const PUBLISH = new RedisScript(`${APPEND_EVENT_LUA}
return append_event(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
`);

/** Each bus's streams, for the RedisTaskStore linked to it (not part of the public API). */
const streamsOfBus = new WeakMap<RedisTaskEventBus, TaskEventStreams>();

/** The streams of `bus`, for a store that appends its events to them. */
export const taskEventStreams = (bus: RedisTaskEventBus): TaskEventStreams => streamsOfBus.get(bus)!;

// KEYS: the stream. ARGV: the version after which events are wanted, and '1' to check that the
// stream still holds all of them. Replies false when it is checked and the stream is gone or starts
// above the next version (trimmed or expired: some may be missing), else the payloads after that
// version, oldest first.
const READ = new RedisScript(`
local after = tonumber(ARGV[1])
if ARGV[2] == '1' then
  local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)
  if #first == 0 or tonumber(string.match(first[1][1], '^%d+')) > after + 1 then return false end
end
local out = {}
for _, entry in ipairs(redis.call('XRANGE', KEYS[1], (after + 1) .. '-0', '+')) do out[#out + 1] = entry[2][2] end
return out
`);

/** The followers of one task in this process, and how far they have been served. */
interface Group {
  readonly followers: Set<CommittedEventListener>;
  channel: ChannelHandle;
  /** The highest version delivered: nothing at or below it is delivered again. */
  last: number;
  /** Live messages held while the stream is read, delivered after it; undefined when live. */
  held: CommittedEvent[] | undefined;
  /** Stream reads under way: live messages are held until the last one is done. */
  reads: number;
}

export class RedisTaskEventBus implements TaskEventBus {
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;
  readonly #retentionMs: number;
  readonly #maxLength: number;
  readonly #logger: Logger;
  readonly #channels: RedisChannels;
  readonly #streams: TaskEventStreams;
  readonly #groups = new Map<string, Group>();
  /** Subscriptions and catch-ups not settled yet (for subscribed()). */
  readonly #pending = new Set<Promise<unknown>>();
  #subscribers = 0;
  #closed = false;

  constructor(options: RedisTaskEventBusOptions) {
    const parsed = parseOptions('RedisTaskEventBus', optionsSchema, options);
    this.#client = parsed.client;
    this.#keys = new RedisKeys(parsed.keyPrefix);
    this.#retentionMs = parsed.streamRetentionMs;
    this.#maxLength = parsed.streamMaxLength;
    this.#logger = parsed.logger;
    this.#channels = new RedisChannels(this.#client, this.#logger);
    this.#streams = new TaskEventStreams(this.#keys, this.#maxLength, this.#retentionMs);
    streamsOfBus.set(this, this.#streams);
    // Whatever is published while the subscriber connection is down is read from the streams once
    // it is back; live messages are held meanwhile, so they are delivered after what they follow.
    this.#channels.onReconnect({
      lost: () => {
        for (const group of this.#groups.values()) group.held ??= [];
      },
      back: () => {
        for (const [key, group] of this.#groups) this.#catchUp(key, group, Promise.resolve(group.last));
      },
    });
  }

  get subscriberCount(): number {
    return this.#subscribers;
  }

  /** Tasks this process follows now (a gauge: 0 once every subscriber has left). */
  get followedTasks(): number {
    return this.#groups.size;
  }

  async publish(key: string, committed: CommittedEvent): Promise<void> {
    const { version } = committed;
    if (!Number.isSafeInteger(version) || version < 1) throw new RangeError(`RedisTaskEventBus: version must be a positive integer, got ${version}`);
    // A linked store's write script appended and published this version already (see RedisTaskStore).
    if (this.#streams.takeAppended(key, version)) return;
    const payload = JSON.stringify(committed);
    await PUBLISH.run(this.#client, [this.#keys.events(key)], [version, payload, this.#maxLength, this.#retentionMs, this.#keys.eventsChannel(key)]);
  }

  subscribe(key: string, listener: CommittedEventListener): () => void {
    if (this.#closed) throw new Error('RedisTaskEventBus is closed');
    const group = this.#groups.get(key) ?? this.#follow(key);
    // A wrapper per call, so the same function subscribed twice is two subscriptions.
    const follower: CommittedEventListener = (committed) => listener(committed);
    group.followers.add(follower);
    this.#subscribers++;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      group.followers.delete(follower);
      this.#subscribers--;
      if (group.followers.size > 0) return;
      if (this.#groups.get(key) === group) this.#groups.delete(key);
      group.channel.stop();
    };
  }

  requestCancel(key: string): void {
    this.#client.sendCommand(['PUBLISH', this.#keys.cancelChannel(key), '']).catch((error: unknown) => {
      this.#logger.error({ err: error }, 'could not publish a cancel request on Redis');
    });
  }

  onCancelRequest(key: string, listener: () => void): () => void {
    if (this.#closed) throw new Error('RedisTaskEventBus is closed');
    const handle = this.#channels.listen(this.#keys.cancelChannel(key), () => listener());
    this.#track(handle.ready, 'could not subscribe to cancel requests on Redis');
    return () => handle.stop();
  }

  async history(key: string, afterVersion: number): Promise<CommittedEvent[] | undefined> {
    if (!Number.isSafeInteger(afterVersion) || afterVersion < 0)
      throw new RangeError(`RedisTaskEventBus: afterVersion must be a whole number, got ${afterVersion}`);
    return this.#read(key, afterVersion, true);
  }

  async #read(key: string, afterVersion: number, whole: boolean): Promise<CommittedEvent[] | undefined> {
    const payloads = await READ.run<string[] | null>(this.#client, [this.#keys.events(key)], [afterVersion, whole ? '1' : '0']);
    return payloads?.map((payload) => JSON.parse(payload) as CommittedEvent);
  }

  /**
   * Resolves once every subscription made so far is live in Redis, and the catch-up reads done
   * (tests and tools; the engine needs none: no event is missed in between).
   */
  async subscribed(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Stops following every task and closes the subscriber connection (not the command client). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#groups.clear();
    await this.#channels.close();
  }

  #follow(key: string): Group {
    // Where the stream stands now, asked before anything else, so every event published after
    // this call is read from the stream or arrives on the channel.
    const fence = this.#client.sendCommand<Array<[string, unknown]>>(['XREVRANGE', this.#keys.events(key), '+', '-', 'COUNT', '1']);
    const group: Group = { followers: new Set(), last: 0, held: [], reads: 0, channel: undefined! };
    group.channel = this.#channels.listen(this.#keys.eventsChannel(key), (message) => this.#onMessage(group, message));
    group.channel.ready.catch(() => this.#subscribeAgainLater(key, group));
    this.#groups.set(key, group);
    const from = Promise.all([fence, group.channel.ready]).then(([top]) => (top.length > 0 ? versionOf(top[0][0]) : 0));
    this.#catchUp(key, group, from);
    return group;
  }

  /**
   * A SUBSCRIBE that failed (Redis down, or not answering within the command deadline) is tried
   * again while the task has followers here, so they get its events once Redis is back, starting
   * with what they missed from the stream.
   */
  #subscribeAgainLater(key: string, group: Group): void {
    const timer = setTimeout(() => {
      if (this.#closed || this.#groups.get(key) !== group) return;
      group.channel.stop();
      group.channel = this.#channels.listen(this.#keys.eventsChannel(key), (message) => this.#onMessage(group, message));
      group.channel.ready.catch(() => this.#subscribeAgainLater(key, group));
      this.#catchUp(
        key,
        group,
        group.channel.ready.then(() => group.last),
      );
    }, SUBSCRIBE_RETRY_MS);
    timer.unref();
  }

  #catchUp(key: string, group: Group, from: Promise<number>): void {
    group.held ??= [];
    group.reads++;
    const done = (async () => {
      try {
        const after = await from;
        // Whatever the stream holds after that point (it may have been trimmed: that part is lost).
        for (const committed of (await this.#read(key, after, false)) ?? []) this.#deliver(group, committed);
      } catch (error) {
        if (!this.#closed) this.#logger.error({ err: error }, 'could not follow a task on Redis; its subscribers may miss events');
      } finally {
        if (--group.reads === 0) {
          const held = group.held ?? [];
          group.held = undefined;
          for (const committed of held) this.#deliver(group, committed);
        }
      }
    })();
    this.#track(done);
  }

  #onMessage(group: Group, message: string): void {
    let committed: CommittedEvent;
    try {
      committed = JSON.parse(message) as CommittedEvent;
    } catch (error) {
      this.#logger.warn({ err: error }, 'ignored a task event on Redis that is not JSON');
      return;
    }
    if (group.held) group.held.push(committed);
    else this.#deliver(group, committed);
  }

  #deliver(group: Group, committed: CommittedEvent): void {
    if (!(committed.version > group.last)) return;
    group.last = committed.version;
    for (const follower of [...group.followers]) {
      try {
        follower(committed);
      } catch (error) {
        this.#logger.error({ err: error }, 'a task event subscriber threw');
      }
    }
  }

  #track(promise: Promise<unknown>, failure?: string): void {
    const settled = promise.then(
      () => undefined,
      (error: unknown) => {
        if (failure && !this.#closed) this.#logger.error({ err: error }, failure);
      },
    );
    this.#pending.add(settled);
    void settled.then(() => this.#pending.delete(settled));
  }
}

const versionOf = (entryId: string): number => Number.parseInt(entryId, 10);

/** How long after a failed SUBSCRIBE a task's channel is subscribed again. */
const SUBSCRIBE_RETRY_MS = 500;
