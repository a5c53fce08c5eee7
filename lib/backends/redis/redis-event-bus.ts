/**
 * A TaskEventBus on Redis: each committed event is an entry `<version>-0` of the task's stream and a PUBLISH of it on the task's channel, in one
 * script; followers catch up from the stream.
 */
import { z } from 'zod';
import { consoleLogger, type Logger, parseOptions } from '../../options.js';
import type { CommittedEvent } from '../../engine/seams/task-event-bus.js';
import { LoggedEventBus, type Group } from '../shared/logged-event-bus.js';
import { RedisChannels } from './redis-channels.js';
import { type RedisClient, clientSchema, keyPrefixSchema, loggerSchema, millisecondsSchema, RedisScript } from './redis-client.js';
import { TaskEventStreams, APPEND_EVENT_LUA } from './redis-event-stream.js';
import { RedisKeys } from './redis-keys.js';

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

// KEYS: the stream. ARGV: version, payload, max length, retention ms, channel. Replies 0 when the stream has that version (or a later one) already,
// so nothing happens.
const PUBLISH = new RedisScript(`${APPEND_EVENT_LUA}
return append_event(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
`);

// KEYS: the cancel count, the cancel log. ARGV: task key, its cancel channel. Numbers the request, logs it (the last 1000 or so kept: a subscriber
// connection that was replaced replays them) and publishes its number.
const SEND_CANCEL = new RedisScript(`
local n = redis.call('INCR', KEYS[1])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', 1000, n .. '-0', 'k', ARGV[1])
redis.call('PUBLISH', ARGV[2], n)
return n
`);

/** Each bus's streams, for the RedisTaskStore linked to it (not part of the public API). */
const streamsOfBus = new WeakMap<RedisTaskEventBus, TaskEventStreams>();

/** The streams of `bus`, for a store that appends its events to them. */
export const taskEventStreams = (bus: RedisTaskEventBus): TaskEventStreams => streamsOfBus.get(bus)!;

// KEYS: the stream. ARGV: the version after which events are wanted, and '1' to check that the stream still holds all of them. Replies false when it
// is checked and the stream is gone or starts above the next version (trimmed or expired: some may be missing), else the payloads after that version,
// oldest first.
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

export class RedisTaskEventBus extends LoggedEventBus {
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;
  readonly #channels: RedisChannels;
  readonly #streams: TaskEventStreams;

  constructor(options: RedisTaskEventBusOptions) {
    const parsed = parseOptions('RedisTaskEventBus', optionsSchema, options);
    super('RedisTaskEventBus', 'on Redis', parsed.logger);
    this.#client = parsed.client;
    this.#keys = new RedisKeys(parsed.keyPrefix);
    this.#channels = new RedisChannels(this.#client, this.logger);
    this.#streams = new TaskEventStreams(this.#keys, parsed.streamMaxLength, parsed.streamRetentionMs);
    streamsOfBus.set(this, this.#streams);
    this.#channels.onReconnect({ lost: () => this.connectionLost(), back: () => this.connectionBack() });
  }

  protected async append(key: string, committed: CommittedEvent): Promise<void> {
    // A linked store's write script appended and published this version already (see RedisTaskStore).
    if (this.#streams.takeAppended(key, committed.version)) return;
    const { maxLength, retentionMs } = this.#streams;
    await PUBLISH.run(
      this.#client,
      [this.#keys.events(key)],
      [committed.version, JSON.stringify(committed), maxLength, retentionMs, this.#keys.eventsChannel(key)],
    );
  }

  protected async read(key: string, after: number, whole: boolean): Promise<CommittedEvent[] | undefined> {
    const payloads = await READ.run<string[] | null>(this.#client, [this.#keys.events(key)], [after, whole ? '1' : '0']);
    return payloads?.map((payload) => JSON.parse(payload) as CommittedEvent);
  }

  /**
   * Where the stream stands is asked before the SUBSCRIBE, so every event published after this call is read from the stream (once subscribed) or
   * arrives on the channel.
   */
  protected follow(group: Group): Promise<{ top: number; read: boolean }> {
    const fence = this.#client.sendCommand<Array<[string, unknown]>>(['XREVRANGE', this.#keys.events(group.key), '+', '-', 'COUNT', '1']);
    const channel = this.#channels.listen(this.#keys.eventsChannel(group.key), (message) => {
      try {
        const committed = JSON.parse(message) as CommittedEvent;
        this.noticed(group, committed.version, committed);
      } catch (error) {
        this.logger.warn({ err: error }, 'ignored a task event on Redis that is not JSON');
      }
    });
    group.stop = channel.stop;
    return Promise.all([fence, channel.ready]).then(([top]) => ({ top: top.length > 0 ? Number.parseInt(top[0][0], 10) : 0, read: true }));
  }

  protected async sendCancel(key: string): Promise<void> {
    const { count, log } = this.#keys.cancels();
    await SEND_CANCEL.run(this.#client, [count, log], [key, this.#keys.cancelChannel(key)]);
  }

  protected listenCancels(key: string): { ready: Promise<void>; stop: () => void } {
    return this.#channels.listen(this.#keys.cancelChannel(key), (message) => this.heardCancel(Number(message) || 0, key));
  }

  protected async cancelCount(): Promise<number> {
    return Number(await this.#client.sendCommand<string | null>(['GET', this.#keys.cancels().count]));
  }

  protected async cancelsAfter(after: number): Promise<Array<[number, string]>> {
    const entries = await this.#client.sendCommand<Array<[string, string[]]>>(['XRANGE', this.#keys.cancels().log, `${after + 1}-0`, '+']);
    return entries.map(([id, fields]) => [Number.parseInt(id, 10), fields[1]]);
  }

  protected closeTransport(): Promise<void> {
    return this.#channels.close();
  }
}
