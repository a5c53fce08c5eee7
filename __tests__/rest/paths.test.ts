/** matchRestRoute: the a2a.proto `google.api.http` bindings, with and without `/{tenant}`, parsed without Express. */
import { matchRestRoute, pathSegment } from '../../lib/protocol/rest';

describe('matchRestRoute', () => {
  const served: [string, string, object][] = [
    ['POST', '/message:send', { operation: 'SendMessage', hasBody: true }],
    ['POST', '/message:stream', { operation: 'SendStreamingMessage', hasBody: true }],
    ['GET', '/tasks/t-1', { operation: 'GetTask', taskId: 't-1', hasBody: false }],
    ['GET', '/tasks', { operation: 'ListTasks', hasBody: false }],
    ['POST', '/tasks/t-1:cancel', { operation: 'CancelTask', taskId: 't-1' }],
    ['GET', '/tasks/t-1:subscribe', { operation: 'SubscribeToTask', taskId: 't-1', hasBody: false }],
    ['POST', '/tasks/t-1:subscribe', { operation: 'SubscribeToTask', taskId: 't-1', hasBody: true }],
    ['POST', '/tasks/t-1/pushNotificationConfigs', { operation: 'CreateTaskPushNotificationConfig', taskId: 't-1' }],
    ['GET', '/tasks/t-1/pushNotificationConfigs', { operation: 'ListTaskPushNotificationConfigs', taskId: 't-1' }],
    ['GET', '/tasks/t-1/pushNotificationConfigs/c-1', { operation: 'GetTaskPushNotificationConfig', taskId: 't-1', configId: 'c-1' }],
    ['DELETE', '/tasks/t-1/pushNotificationConfigs/c-1', { operation: 'DeleteTaskPushNotificationConfig', taskId: 't-1', configId: 'c-1' }],
    ['GET', '/extendedAgentCard', { operation: 'GetExtendedAgentCard' }],
  ];

  it.each(served)('%s %s', (method, path, expected) => {
    expect(matchRestRoute(method, path)).toEqual({ match: expect.objectContaining({ ...expected, tenant: undefined }) });
    // Every route again under a tenant prefix.
    expect(matchRestRoute(method, `/acme${path}`)).toEqual({ match: expect.objectContaining({ ...expected, tenant: 'acme' }) });
  });

  it('leaves segments %-encoded (the verb is matched before decoding)', () => {
    expect(matchRestRoute('POST', '/a%2Fb/tasks/x%3Acancel:cancel')).toEqual({
      match: expect.objectContaining({ operation: 'CancelTask', tenant: 'a%2Fb', taskId: 'x%3Acancel' }),
    });
    expect(matchRestRoute('GET', '/tasks/x%3Acancel')).toEqual({ match: expect.objectContaining({ operation: 'GetTask', taskId: 'x%3Acancel' }) });
  });

  it('prefers the un-prefixed reading, then the prefixed one that serves the method', () => {
    expect(matchRestRoute('GET', '/tasks/tasks')).toEqual({
      match: expect.objectContaining({ operation: 'GetTask', taskId: 'tasks', tenant: undefined }),
    });
    expect(matchRestRoute('POST', '/tasks/message:send')).toEqual({ match: expect.objectContaining({ operation: 'SendMessage', tenant: 'tasks' }) });
    expect(matchRestRoute('GET', '/tasks/tasks/t-1')).toEqual({
      match: expect.objectContaining({ operation: 'GetTask', tenant: 'tasks', taskId: 't-1' }),
    });
  });

  it('a served path with another method: the allowed ones', () => {
    expect(matchRestRoute('GET', '/message:send')).toEqual({ allow: 'POST, OPTIONS' });
    expect(matchRestRoute('DELETE', '/acme/tasks')).toEqual({ allow: 'GET, OPTIONS' });
    expect(matchRestRoute('PATCH', '/tasks/t-1/pushNotificationConfigs/c-1')).toEqual({ allow: 'GET, DELETE, OPTIONS' });
    expect(matchRestRoute('DELETE', '/tasks/tasks')).toEqual({ allow: 'GET, OPTIONS' });
  });

  it('anything else: undefined', () => {
    for (const path of [
      '/',
      '',
      'tasks',
      '/message',
      '/message:sendx',
      '/a/b/tasks',
      '/tasks/t/x',
      '/tasks/t/pushNotificationConfigs/c/x',
      '/.well-known/agent-card.json',
      '//tasks/t',
    ]) {
      expect([path, matchRestRoute('GET', path)]).toEqual([path, undefined]);
    }
  });

  it('ignores one trailing slash', () => {
    expect(matchRestRoute('GET', '/tasks/')).toEqual({ match: expect.objectContaining({ operation: 'ListTasks' }) });
    expect(matchRestRoute('GET', '/acme/tasks/t-1/')).toEqual({
      match: expect.objectContaining({ operation: 'GetTask', tenant: 'acme', taskId: 't-1' }),
    });
  });
});

describe('pathSegment', () => {
  it('decodes, and refuses a malformed escape naming the field', () => {
    expect(pathSegment('a%20b', 'id')).toBe('a b');
    expect(pathSegment('plain', 'id')).toBe('plain');
    expect(() => pathSegment('%E0%A4%A', 'id')).toThrow('id: is not a valid percent-encoded path segment');
    expect(() => pathSegment('%', 'tenant')).toThrow('tenant: is not a valid percent-encoded path segment');
  });
});
