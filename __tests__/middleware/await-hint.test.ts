/** A middleware factory given a Promise where its options object belongs says "did you forget await?". */
import { a2aAuth, a2aTenant, createA2ARouter, defineAgentCard, header, type AgentExecutor } from '../../lib';

const executor: AgentExecutor = { execute: (_ctx, events) => events.complete('ok') };

describe('middleware options that are Promises', () => {
  it('a2aTenant(promise) and a2aAuth(promise) name the forgotten await', () => {
    expect(() => a2aTenant(Promise.resolve({ from: header('x-tenant') }) as never)).toThrow(
      'a2aTenant: got a Promise instead of an options object: did you forget `await`?',
    );
    expect(() => a2aAuth(Promise.resolve({ allowAnonymous: true }) as never)).toThrow('a2aAuth: got a Promise instead of an options object');
  });

  it('a Promise inside a middleware option object is named by its path', () => {
    expect(() => a2aTenant({ from: Promise.resolve(header('x-tenant')) } as never)).toThrow(
      'a2aTenant: option "from" is a Promise, not the value it resolves to: did you forget `await`?',
    );
  });

  it("createA2ARouter's middleware options too", () => {
    const agentCard = defineAgentCard({ name: 'A', description: 'B' });
    expect(() => createA2ARouter({ agentCard, executor, auth: Promise.resolve({ allowAnonymous: true }) } as never)).toThrow(
      'createA2ARouter: option "auth" is a Promise',
    );
  });
});
