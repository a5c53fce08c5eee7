/**
 * commandTimeoutMs without a Redis: a client whose commands never answer makes the backend's calls
 * reject with RedisCommandTimeoutError (your own client included), a SUBSCRIBE that timed out is
 * tried again by the channel's next listener and by the event bus itself, and the new options are
 * checked like the others.
 */
import { createRedisBackend, RedisCommandTimeoutError, RedisTaskEventBus } from 'a2a-express-kit/redis';
import { silentLogger } from 'a2a-express-kit';
import { deferred } from '../helpers/async';
import { RedisChannels } from '../../lib/backends/redis/redis-channels';
import type { RedisClient } from '../../lib/backends/redis/redis-client';
import { withCommandDeadline } from '../../lib/backends/redis/redis-deadline';

/** A connected client that never answers a command; subscribe() answers from `subscribeAnswers` in turn (never once they run out). */
function silentClient(subscribeAnswers: Array<() => Promise<void>> = []): RedisClient & { commands: string[][] } {
  const commands: string[][] = [];
  const client = {
    commands,
    isOpen: true,
    sendCommand: (args: ReadonlyArray<string | Buffer>) => {
      commands.push(args.map(String));
      return new Promise<never>(() => {});
    },
    duplicate: () => client,
    connect: () => Promise.resolve(),
    close: () => Promise.resolve(),
    destroy: () => {},
    subscribe: () => (subscribeAnswers.shift() ?? (() => new Promise<void>(() => {})))(),
    unsubscribe: () => Promise.resolve(),
    on: () => client,
  };
  return client;
}

describe('commandTimeoutMs', () => {
  it('fails a call on your own client when Redis does not answer', async () => {
    const client = silentClient();
    const backend = await createRedisBackend({ client, logger: silentLogger, commandTimeoutMs: 50 });
    const got = backend.taskStore.get({ tenant: 't', owner: 'o' }, 'task-1');
    await expect(got).rejects.toBeInstanceOf(RedisCommandTimeoutError);
    await expect(got).rejects.toThrow(/Redis did not answer \w+ within 50 ms/);
    expect(client.commands.length).toBeGreaterThan(0);
    await backend.close();
  });

  it('lets the next listener of a channel subscribe again after a SUBSCRIBE timed out', async () => {
    const channels = new RedisChannels(
      withCommandDeadline(silentClient([() => new Promise<void>(() => {}), () => Promise.resolve()]), 50),
      silentLogger,
    );
    const first = channels.listen('events:1', () => {});
    await expect(first.ready).rejects.toBeInstanceOf(RedisCommandTimeoutError);
    const second = channels.listen('events:1', () => {});
    await expect(second.ready).resolves.toBeUndefined();
    await channels.close();
  });

  it("has the event bus subscribe a task's channel again after its SUBSCRIBE timed out", async () => {
    let live: ((message: string) => unknown) | undefined;
    const fake = silentClient([() => new Promise<void>(() => {}), () => Promise.resolve()]);
    const subscribe = fake.subscribe;
    const subscribedAgain = deferred();
    let calls = 0;
    fake.subscribe = (channel, listener) => {
      live = listener as (message: string) => unknown;
      if (++calls === 2) subscribedAgain.resolve();
      return subscribe(channel, listener);
    };
    // The stream is empty: the fence and the catch-up reads answer at once.
    fake.sendCommand = (<T>() => Promise.resolve([] as T)) as RedisClient['sendCommand'];
    const bus = new RedisTaskEventBus({ client: withCommandDeadline(fake, 50), logger: silentLogger });
    const received: number[] = [];
    const stop = bus.subscribe('task-1', (committed) => received.push(committed.version));
    await subscribedAgain.promise;
    await bus.subscribed();
    live!(JSON.stringify({ version: 1 }));
    expect(received).toEqual([1]);
    stop();
    await bus.close();
  });

  it('is checked with the other options', async () => {
    await expect(createRedisBackend({ url: 'redis://x', commandTimeoutMs: 0 })).rejects.toThrow(/option "commandTimeoutMs"/);
    await expect(createRedisBackend({ url: 'redis://x', maxQueuedCommands: 0 })).rejects.toThrow(/option "maxQueuedCommands"/);
    await expect(createRedisBackend({ url: 'redis://x', commandTimeoutMS: 5 } as never)).rejects.toThrow(/did you mean "commandTimeoutMs"/);
  });
});
