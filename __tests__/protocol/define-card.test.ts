/**
 * The first ten minutes: defineAgentCard() makes a valid card from a name and a description, and a
 * card with several problems gets one A2AOptionsError listing all of them, each with its path and fix.
 */
import { A2AOptionsError, createA2ARouter, defineAgentCard, silentLogger, type A2ARouterOptions, type AgentExecutor } from '../../lib';
import { SqliteTaskStore } from '../../lib/sqlite';
import { createRedisBackend } from '../../lib/redis';
import { markUnawaitedSpread } from '../../lib/options';
import { listen } from '../helpers/http';
import express from 'express';

const executor: AgentExecutor = { execute: (_ctx, events) => events.complete('ok') };

/** The A2AOptionsError `build` throws (the test fails if it throws nothing or something else). */
function optionsErrorOf(build: () => unknown): A2AOptionsError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(A2AOptionsError);
    return error as A2AOptionsError;
  }
  throw new Error('expected an A2AOptionsError, nothing was thrown');
}

describe('defineAgentCard', () => {
  it('a name and a description make a card createA2ARouter serves, with the defaults filled in', async () => {
    const agentCard = defineAgentCard({ name: 'Travel agent', description: 'Books flights.' });
    expect(agentCard).toEqual({
      name: 'Travel agent',
      description: 'Books flights.',
      version: '1.0.0',
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'travel-agent', name: 'Travel agent', description: 'Books flights.', tags: ['travel-agent'] }],
    });
    const app = express();
    const agent = createA2ARouter({ agentCard, executor, logger: silentLogger });
    app.use('/agent', agent);
    const server = await listen(app);
    try {
      const served = (await (await fetch(`${server.baseUrl}/agent/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
      expect(served).toMatchObject({ name: 'Travel agent', version: '1.0.0', skills: [{ id: 'travel-agent' }] });
      expect(served.supportedInterfaces).toContainEqual({ url: `${server.baseUrl}/agent`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    } finally {
      await agent.close();
      await server.close();
    }
  });

  it('keeps what is given; a skill without id or tags gets them from its name', () => {
    const agentCard = defineAgentCard({
      name: 'Travel agent',
      description: 'Books flights.',
      version: '2.3.0',
      capabilities: {},
      skills: [
        { name: 'Book a flight', description: 'Asks for the day, then books.' },
        { id: 'x', name: 'X', description: 'x', tags: ['t'] },
      ],
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
    });
    expect(agentCard.version).toBe('2.3.0');
    expect(agentCard.capabilities).toEqual({});
    expect(agentCard.skills).toEqual([
      { id: 'book-a-flight', name: 'Book a flight', description: 'Asks for the day, then books.', tags: ['book-a-flight'] },
      { id: 'x', name: 'X', description: 'x', tags: ['t'] },
    ]);
    expect(() => createA2ARouter({ agentCard, executor, logger: silentLogger })).not.toThrow();
  });

  it('its type says what is required: a name, a description, and at least one skill and one tag where given', () => {
    // @ts-expect-error name is required
    expect(() => defineAgentCard({ description: 'B' })).toThrow(A2AOptionsError);
    // @ts-expect-error at least one skill
    expect(() => defineAgentCard({ name: 'A', description: 'B', skills: [] })).toThrow(A2AOptionsError);
    // @ts-expect-error at least one tag
    expect(() => defineAgentCard({ name: 'A', description: 'B', skills: [{ name: 'S', description: 'd', tags: [] }] })).toThrow(A2AOptionsError);
  });

  it('names a misspelt field instead of filling in a default for it', () => {
    const error = optionsErrorOf(() => defineAgentCard({ name: 'A', description: 'B', skill: [] } as never));
    expect(error.message).toContain('"agentCard.skill" is unknown (did you mean "agentCard.skills"?)');
  });

  it('lists every problem of a plain-JS definition at once', () => {
    const error = optionsErrorOf(() => defineAgentCard({ description: 42, skills: [{ name: 'S', description: 'd', tags: [] }] } as never));
    expect(error.message).toMatch(/^defineAgentCard: 3 problems in the options:\n/);
    expect(error.message).toContain('option "agentCard.name": name is required');
    expect(error.message).toContain('option "agentCard.description": description must be a string');
    expect(error.message).toContain('option "agentCard.skills.0.tags": tags must have at least one entry; each skill needs at least one tag');
  });
});

describe('createA2ARouter and a hand-written card with several problems', () => {
  it('reports all of them in one A2AOptionsError, each with its path and fix', () => {
    const agentCard = {
      name: 'Travel agent',
      description: 'Books flights.',
      capabilities: {},
      skills: [],
      securitySchemes: { bearer: { scheme: 'Bearer' } },
    };
    const error = optionsErrorOf(() => createA2ARouter({ agentCard, executor } as unknown as A2ARouterOptions));
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('createA2ARouter: 5 problems in the options:');
    expect(lines).toHaveLength(6);
    expect(lines.slice(1)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ {2}- option "agentCard.version": version is required; the agent's own version .*'1\.0\.0'/),
        expect.stringMatching(/^ {2}- option "agentCard.defaultInputModes": defaultInputModes is required; .*\['text\/plain'\]/),
        expect.stringMatching(/^ {2}- option "agentCard.defaultOutputModes": defaultOutputModes is required; /),
        expect.stringMatching(/^ {2}- option "agentCard.skills": skills must have at least one entry; the card needs at least one skill, e\.g\. /),
        expect.stringMatching(/^ {2}- option "agentCard.securitySchemes.bearer": .*httpAuthSecurityScheme: \{ scheme: 'Bearer' \}/),
      ]),
    );
    expect(error.code).toBe('ERR_A2A_OPTIONS');
  });

  it('names a misspelt card field next to the field it hides', () => {
    const { skills, ...rest } = defineAgentCard({ name: 'A', description: 'B' });
    const error = optionsErrorOf(() => createA2ARouter({ agentCard: { ...rest, skils: skills } as never, executor }));
    expect(error.message).toBe('createA2ARouter: option "agentCard.skills": skills is required (the object has "skils": did you mean "skills"?)');
  });
});

describe('a Promise where a value belongs: "did you forget await?"', () => {
  const agentCard = defineAgentCard({ name: 'A', description: 'B' });

  it('names a Promise passed as taskStore', () => {
    const taskStore = Promise.resolve({});
    const error = optionsErrorOf(() => createA2ARouter({ agentCard, executor, taskStore } as never));
    expect(error.message).toBe('createA2ARouter: option "taskStore" is a Promise, not the value it resolves to: did you forget `await`?');
  });

  it('names a Promise in a nested option and a Promise as the options themselves', () => {
    const nested = optionsErrorOf(() => createA2ARouter({ agentCard, executor, pushNotifications: { configStore: Promise.resolve({}) } } as never));
    expect(nested.message).toContain('option "pushNotifications.configStore" is a Promise');
    const whole = optionsErrorOf(() => createA2ARouter(Promise.resolve({ agentCard, executor }) as never));
    expect(whole.message).toBe('createA2ARouter: got a Promise instead of an options object: did you forget `await`?');
  });

  it('a store constructor names a Promise given as its database', () => {
    expect(() => new SqliteTaskStore({ database: Promise.resolve({}) } as never)).toThrow(
      'SqliteTaskStore: option "database" is a Promise, not the value it resolves to: did you forget `await`?',
    );
  });

  it('names the spread of an un-awaited factory Promise marked by that factory', () => {
    const backend = markUnawaitedSpread(Promise.resolve({ options: {} }), 'createRedisBackend', '.options');
    const error = optionsErrorOf(() => createA2ARouter({ agentCard, executor, ...backend } as never));
    expect(error.message).toBe(
      'createA2ARouter: the options spread an un-awaited createRedisBackend() Promise, which adds nothing to them: ' +
        'await it first, e.g. ...(await createRedisBackend(options)).options',
    );
  });

  it('names the spread of an un-awaited createRedisBackend() (the real factory marks its Promise)', async () => {
    // Nothing listens on port 1: the backend's own Promise rejects, which this test only waits for.
    const pending = createRedisBackend({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 50, logger: silentLogger });
    const settled = pending.then(
      () => undefined,
      () => undefined,
    );
    const error = optionsErrorOf(() => createA2ARouter({ agentCard, executor, ...pending } as never));
    expect(error.message).toContain('the options spread an un-awaited createRedisBackend() Promise');
    expect(error.message).toContain('...(await createRedisBackend(options)).options');
    await settled;
  });

  it('says which property to pass when taskStore is given a backend instead of its store', () => {
    const store = { get() {}, create() {}, update() {}, list() {} };
    const backend = { options: { taskStore: store }, taskStore: store, close() {} };
    const error = optionsErrorOf(() => createA2ARouter({ agentCard, executor, taskStore: backend } as never));
    expect(error.message).toContain('option "taskStore": must implement get, create, update and list');
    expect(error.message).toContain('pass its .taskStore, or spread its options: ...backend.options');
  });
});
