/**
 * The v0.3 HTTP+JSON codec's pure part (lib/protocol/v0_3/rest.ts): its routes, and the ProtoJSON
 * of the v0.3 proto in and out; a request read with it and answered with it round-trips through
 * the v1.0 objects the engine sees.
 */
import { parseParams } from '../../lib/protocol/jsonrpc';
import { TASK_STATES, type Task } from '../../lib/protocol/schemas';
import { matchV03RestRoute, fromV03RestSendMessageRequest, toV03RestMessage, toV03RestTask, v03RestErrorBody } from '../../lib/protocol/v0_3/rest';
import { V03MessageSendParamsSchema, type V03MessageSendParams } from '../../lib/protocol/v0_3/schemas';
import { toV03Message, toV03Task, toV1SendMessageRequest } from '../../lib/protocol/v0_3/translate';
import { A2AError, taskNotFound } from '../../lib/errors';

describe('matchV03RestRoute', () => {
  it.each([
    ['POST', '/v1/message:send', 'SendMessage', undefined],
    ['POST', '/v1/message:stream', 'SendStreamingMessage', undefined],
    ['GET', '/v1/tasks/t-1', 'GetTask', 't-1'],
    ['POST', '/v1/tasks/t-1:cancel', 'CancelTask', 't-1'],
    ['GET', '/v1/tasks/t-1:subscribe', 'SubscribeToTask', 't-1'],
    ['POST', '/v1/tasks/t-1:subscribe', 'SubscribeToTask', 't-1'],
    ['POST', '/v1/tasks/t-1/pushNotificationConfigs', 'CreateTaskPushNotificationConfig', 't-1'],
    ['GET', '/v1/tasks/t-1/pushNotificationConfigs', 'ListTaskPushNotificationConfigs', 't-1'],
    ['GET', '/v1/tasks/t-1/pushNotificationConfigs/c-1', 'GetTaskPushNotificationConfig', 't-1'],
    ['DELETE', '/v1/tasks/t-1/pushNotificationConfigs/c-1', 'DeleteTaskPushNotificationConfig', 't-1'],
    ['GET', '/v1/card', 'GetExtendedAgentCard', undefined],
    ['GET', '/v1/card/', 'GetExtendedAgentCard', undefined],
  ])('%s %s is %s', (method, path, operation, taskId) => {
    expect(matchV03RestRoute(method, path)).toEqual({ match: expect.objectContaining({ operation, taskId, v03: true, hasBody: method === 'POST' }) });
  });

  it.each(['/message:send', '/v1/tasks', '/v1/extendedAgentCard', '/v1/acme/message:send', '/v1/__proto__', '/v2/message:send'])(
    'leaves %s to the v1.0 reading (no v0.3 route)',
    (path) => {
      expect(matchV03RestRoute('GET', path)).toBeUndefined();
    },
  );

  it('another method on a v0.3 path: what it allows', () => {
    expect(matchV03RestRoute('DELETE', '/v1/message:send')).toEqual({ allow: 'POST, OPTIONS' });
    expect(matchV03RestRoute('POST', '/v1/card')).toEqual({ allow: 'GET, OPTIONS' });
  });
});

describe('ProtoJSON in and out', () => {
  const body = {
    message: {
      messageId: 'm-1',
      contextId: 'ctx-1',
      taskId: 't-1',
      role: 'ROLE_USER',
      content: [
        { text: 'hi' },
        { file: { fileWithBytes: 'aGk=', mimeType: 'text/plain' } },
        { file: { fileWithUri: 'https://files.example.com/a.txt' } },
        { data: { data: { a: [1, 2] } } },
      ],
      extensions: ['https://ext.example.com/x'],
      metadata: { trace: 'abc' },
    },
    configuration: {
      acceptedOutputModes: ['text/plain'],
      historyLength: 3,
      blocking: true,
      pushNotification: { id: 'c-1', url: 'https://hooks.example.com', token: 'tok', authentication: { schemes: ['Bearer'], credentials: 'secret' } },
    },
    metadata: { request: 1 },
  };
  const read = (value: unknown): V03MessageSendParams => parseParams(V03MessageSendParamsSchema, fromV03RestSendMessageRequest(value));

  it('a SendMessageRequest becomes v0.3 params, then the v1.0 request the engine sees', () => {
    const v1 = toV1SendMessageRequest(read(body));
    expect(v1).toEqual({
      message: {
        messageId: 'm-1',
        contextId: 'ctx-1',
        taskId: 't-1',
        role: 'ROLE_USER',
        parts: [{ text: 'hi' }, { raw: 'aGk=', mediaType: 'text/plain' }, { url: 'https://files.example.com/a.txt' }, { data: { a: [1, 2] } }],
        extensions: ['https://ext.example.com/x'],
        metadata: { trace: 'abc' },
      },
      configuration: {
        acceptedOutputModes: ['text/plain'],
        historyLength: 3,
        taskPushNotificationConfig: {
          url: 'https://hooks.example.com',
          id: 'c-1',
          token: 'tok',
          authentication: { scheme: 'Bearer', credentials: 'secret' },
        },
      },
      metadata: { request: 1 },
    });
  });

  it('the message comes back as it was sent (v1.0 → v0.3 → ProtoJSON)', () => {
    const v1 = toV1SendMessageRequest(read(body));
    expect(toV03RestMessage(toV03Message(v1.message))).toEqual(body.message);
  });

  it('proto3 defaults: empty strings are unset, a configuration without blocking is non-blocking, none at all is blocking', () => {
    const v1 = toV1SendMessageRequest(read({ message: { ...body.message, contextId: '', taskId: '' }, configuration: {} }));
    expect(v1.message).not.toHaveProperty('contextId');
    expect(v1.message).not.toHaveProperty('taskId');
    expect(v1.configuration).toEqual({ returnImmediately: true });
    expect(toV1SendMessageRequest(read({ message: body.message })).configuration).toBeUndefined();
  });

  it('every task state has its v0.3 proto name (TASK_STATE_CANCELLED with two Ls)', () => {
    const states = TASK_STATES.map((state) => toV03RestTask(toV03Task({ id: 't', contextId: 'c', status: { state } } as Task)).status);
    expect(states.map((s) => (s as { state: string }).state)).toEqual(
      TASK_STATES.map((s) => (s === 'TASK_STATE_CANCELED' ? 'TASK_STATE_CANCELLED' : s)),
    );
  });

  it('errors: the JSON-RPC code and message, the google.rpc details as data', () => {
    expect(v03RestErrorBody(taskNotFound('t-9'))).toEqual({
      code: -32001,
      message: 'Task t-9 not found',
      data: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { taskId: 't-9' } },
      ],
    });
    expect(v03RestErrorBody(new A2AError('Internal'))).toEqual({ code: -32603, message: 'Internal error' });
  });
});
