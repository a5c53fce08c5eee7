/** The call layer (lib/http/call.ts): the request's record resolved into the call (caller, tenant, the tenant check, the lazy signal), negotiation. */
import { A2AError } from '../../lib/errors';
import { ExtensionNegotiator } from '../../lib/protocol/extensions';
import type { AgentCard } from '../../lib/protocol/schemas';
import { contributeA2AState, peekRequestRecord, type A2ARequestState } from '../../lib/context/request-state';
import { ANONYMOUS_CALLER, buildCall, negotiateCall, type WatchClientClose } from '../../lib/http/call';
import { testCard } from '../helpers/fixtures';

const alice = { id: 'alice', authenticated: true };
const bob = { id: 'bob', authenticated: true };
const neverCloses: WatchClientClose<unknown> = () => {};

/** The record of a request to which middlewares contributed `state`. */
function recordOf(state: A2ARequestState) {
  const req = {};
  contributeA2AState(req, state);
  return peekRequestRecord(req);
}

/** The error `fn` throws (fails the test when it throws none). */
function thrown(fn: () => unknown): A2AError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(A2AError);
    return error as A2AError;
  }
  throw new Error('expected a throw');
}

describe('buildCall', () => {
  it('is the anonymous caller under no tenant when nothing was resolved', () => {
    const call = buildCall(undefined, undefined, undefined, [], undefined, null, neverCloses);
    expect(call).toMatchObject({ caller: ANONYMOUS_CALLER, tenant: '', extensions: [], requestId: undefined, trace: undefined });
  });

  it("takes what middlewares contributed, and the app's own answer over it", () => {
    const trace = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), flags: 1 };
    const state = { caller: alice, tenant: 'acme', requestId: 'r-1', trace };
    const fromState = buildCall(recordOf(state), undefined, undefined, ['urn:x'], undefined, null, neverCloses);
    expect(fromState).toMatchObject({ caller: alice, tenant: 'acme', extensions: ['urn:x'], requestId: 'r-1', trace });
    const overridden = buildCall(recordOf(state), { caller: bob, tenant: 'globex' }, undefined, [], undefined, null, neverCloses);
    expect(overridden).toMatchObject({ caller: bob, tenant: 'globex', requestId: 'r-1' });
  });

  it('refuses a stated tenant that differs from the resolved one (-32602, field tenant)', () => {
    const error = thrown(() => buildCall(recordOf({ tenant: 'acme' }), undefined, 'globex', [], undefined, null, neverCloses));
    expect(error.code).toBe(-32602);
    expect(error.fieldViolations).toEqual([{ field: 'tenant', description: expect.any(String) }]);
    expect(() => buildCall(undefined, { tenant: 'acme' }, 'globex', [], undefined, null, neverCloses)).toThrow(A2AError);
    expect(buildCall(recordOf({ tenant: 'acme' }), undefined, 'acme', [], undefined, null, neverCloses).tenant).toBe('acme');
  });

  it('uses the stated tenant when none was resolved', () => {
    expect(buildCall(undefined, undefined, 'acme', [], undefined, null, neverCloses).tenant).toBe('acme');
  });

  it('makes the signal on first use, watching the connection once, and aborts it when told', () => {
    const watched: Array<{ connection: string; abort: () => void }> = [];
    const call = buildCall(
      undefined,
      undefined,
      undefined,
      [],
      undefined,
      'conn-1',
      (connection: string, abort) => void watched.push({ connection, abort }),
    );
    expect(watched).toHaveLength(0);
    const signal = call.signal!;
    expect(call.signal).toBe(signal);
    expect(watched.map((w) => w.connection)).toEqual(['conn-1']);
    expect(signal.aborted).toBe(false);
    watched[0].abort();
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('the client closed the request');
  });
});

describe('negotiateCall', () => {
  const card = {
    ...testCard,
    supportedInterfaces: [],
    capabilities: { extensions: [{ uri: 'urn:opt' }, { uri: 'urn:req', required: true }] },
  } as AgentCard;
  const extensions = new ExtensionNegotiator(card);

  it('serves 1.0 and returns the declared extensions the client asked for, to echo', () => {
    expect(negotiateCall(extensions, '1.0', 'urn:req, urn:opt, urn:unknown')).toEqual(['urn:req', 'urn:opt']);
    expect(negotiateCall(extensions, '1.0.3', 'urn:req')).toEqual(['urn:req']);
  });

  it('refuses another version (-32009) and a missing required extension (-32008)', () => {
    expect(thrown(() => negotiateCall(extensions, undefined, 'urn:req')).code).toBe(-32009);
    expect(thrown(() => negotiateCall(extensions, '0.3', 'urn:req')).code).toBe(-32009);
    expect(thrown(() => negotiateCall(extensions, '1.0', 'urn:opt')).code).toBe(-32008);
  });
});
