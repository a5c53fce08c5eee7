/** createA2ARouter() options validation: A2AOptionsError at construction, with messages that name the problem. */
import { A2AOptionsError, createA2ARouter, silentLogger, type A2ARouterOptions, type AgentExecutor } from '../../lib';
import { RouterOptionsSchema } from '../../lib/express/options';
import { testCard } from '../helpers/fixtures';

const executor: AgentExecutor = { execute: (_ctx, events) => events.complete('ok') };

/** Calls createA2ARouter with deliberately wrong options; returns the thrown error. */
function construct(options: unknown): unknown {
  try {
    createA2ARouter(options as A2ARouterOptions);
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectOptionsError(options: unknown, ...fragments: string[]): void {
  const error = construct(options);
  expect(error).toBeInstanceOf(A2AOptionsError);
  const { message, code } = error as A2AOptionsError;
  expect(code).toBe('ERR_A2A_OPTIONS');
  expect(message).toMatch(/^createA2ARouter: /);
  for (const fragment of fragments) expect(message).toContain(fragment);
}

describe('createA2ARouter options', () => {
  it('throws when the executor is missing', () => {
    expectOptionsError({ agentCard: testCard }, 'executor');
  });

  it('throws when the executor has no execute() method', () => {
    expectOptionsError({ agentCard: testCard, executor: {} }, 'executor', 'execute');
    expectOptionsError({ agentCard: testCard, executor: { execute: 'not a function' } }, 'executor');
  });

  it('names a typo and suggests the option it resembles', () => {
    expectOptionsError({ agentCard: testCard, excutor: executor }, '"excutor"', 'did you mean "executor"');
  });

  it('rejects an unknown option even when all required ones are present', () => {
    expectOptionsError({ agentCard: testCard, executor, logLevel: 'debug' }, '"logLevel"');
  });

  it('names agentCard.name when the card has no name', () => {
    const { name: _name, ...nameless } = testCard;
    expectOptionsError({ agentCard: nameless, executor }, 'agentCard.name');
    expectOptionsError({ agentCard: { ...testCard, name: '' }, executor }, 'agentCard.name');
  });

  it('names the card field when a required card list is empty', () => {
    expectOptionsError({ agentCard: { ...testCard, skills: [] }, executor }, 'agentCard.skills');
  });

  it('rejects a negative cancelGracePeriodMs', () => {
    expectOptionsError({ agentCard: testCard, executor, cancelGracePeriodMs: -1 }, 'cancelGracePeriodMs');
  });

  it('rejects options that are not an object', () => {
    expectOptionsError(undefined);
    expectOptionsError(null);
  });

  it('takes valid options: the documented defaults where none is given, the values given otherwise', () => {
    expect(RouterOptionsSchema.parse({ agentCard: testCard, executor })).toMatchObject({
      cancelGracePeriodMs: 5_000,
      heartbeatIntervalMs: 15_000,
      storeTimeoutMs: 5_000,
      turnTimeoutMs: 0,
      leaseWaitMs: 30_000,
      agentCardMaxAgeSeconds: 300,
      unmatched: 'respond',
      bindings: { jsonRpc: true, rest: true },
      compatibility: { v0_3: true },
    });
    const options = {
      agentCard: {
        ...testCard,
        supportedInterfaces: [{ url: 'https://agents.example.com/agent', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      },
      executor,
      logger: silentLogger,
      cancelGracePeriodMs: 0,
      heartbeatIntervalMs: 0,
      bodyLimit: '64kb',
      agentCardMaxAgeSeconds: 60,
      callContext: () => undefined,
      extendedAgentCard: () => ({ ...testCard, supportedInterfaces: [] }) as never,
    } satisfies A2ARouterOptions;
    expect(RouterOptionsSchema.parse(options)).toMatchObject({ cancelGracePeriodMs: 0, heartbeatIntervalMs: 0, agentCardMaxAgeSeconds: 60 });
    expect(typeof createA2ARouter(options).wellKnownCard).toBe('function');
  });
});
