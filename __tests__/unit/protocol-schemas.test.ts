/** Unit tests for the v1.0 wire schemas: examples from the protocol digest, required fields, oneofs, ranges. */
import type { z } from 'zod';
import {
  AgentCardSchema,
  ArtifactSchema,
  MessageSchema,
  OAuthFlowsSchema,
  PartSchema,
  RoleSchema,
  SecuritySchemeSchema,
  StreamResponseSchema,
  TaskArtifactUpdateEventSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  TaskStateSchema,
  TaskStatusSchema,
  TaskStatusUpdateEventSchema,
  TimestampSchema,
  isBase64,
  type Part,
  type StreamResponse,
} from '../../lib/protocol/schemas';
import {
  CancelTaskRequestSchema,
  CreateTaskPushNotificationConfigRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetExtendedAgentCardRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  ListTasksRequestSchema,
  ListTasksResponseSchema,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
  SubscribeToTaskRequestSchema,
} from '../../lib/protocol/requests';

/** Parses and returns the issues (empty when valid). */
function issuesOf(schema: z.ZodType, input: unknown) {
  const result = schema.safeParse(input);
  return result.success ? [] : result.error.issues;
}

/** Expects failure with an issue at exactly `path`; returns that issue's message. */
function expectIssueAt(schema: z.ZodType, input: unknown, path: PropertyKey[]): string {
  const issues = issuesOf(schema, input);
  const hit = issues.find((i) => JSON.stringify(i.path) === JSON.stringify(path));
  if (!hit) throw new Error(`no issue at ${JSON.stringify(path)}; got ${JSON.stringify(issues)}`);
  return hit.message;
}

function without<T extends object>(obj: T, key: keyof T): Partial<T> {
  const copy = { ...obj };
  delete copy[key];
  return copy;
}

// --- Examples from PROTOCOL.md §3, §4 ---------------------------------------------------------

const digestParts = [
  { text: 'Summarise this', mediaType: 'text/plain' },
  { raw: 'iVBORw0KGgo=', filename: 'in.png', mediaType: 'image/png' },
  { url: 'https://files.example.com/r.pdf', filename: 'r.pdf', mediaType: 'application/pdf' },
  { data: { rows: 3 }, mediaType: 'application/json' },
];

const digestMessage = { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'Book a flight' }], contextId: 'ctx-9' };

const digestArtifact = {
  artifactId: 'a-1',
  name: 'report.pdf',
  parts: [{ url: 'https://files.example.com/r.pdf', mediaType: 'application/pdf' }],
};

const digestTask = {
  id: 't-42',
  contextId: 'ctx-9',
  status: {
    state: 'TASK_STATE_INPUT_REQUIRED',
    timestamp: '2026-01-05T10:00:00.000Z',
    message: {
      messageId: 'm-2',
      role: 'ROLE_AGENT',
      contextId: 'ctx-9',
      taskId: 't-42',
      parts: [{ text: 'Which date?' }],
    },
  },
  history: [{ messageId: 'm-1', role: 'ROLE_USER', contextId: 'ctx-9', taskId: 't-42', parts: [{ text: 'Book a flight' }] }],
};

const digestCard = {
  name: 'Report Agent',
  description: 'Builds sales reports',
  version: '2.1.0',
  supportedInterfaces: [
    { url: 'https://agent.example.com/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'https://agent.example.com/a2a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    { url: 'https://agent.example.com/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
  ],
  capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
  securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } } },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain', 'application/pdf'],
  skills: [{ id: 'q-report', name: 'Quarterly report', description: 'Generates a PDF report', tags: ['reporting'] }],
};

const digestPushConfig = {
  id: 'pn-1',
  taskId: 't-42',
  url: 'https://client.example.com/hook',
  token: 'opaque-123',
  authentication: { scheme: 'Bearer', credentials: 's3cr3t' },
};

describe('digest examples parse', () => {
  it.each(digestParts.map((p) => [Object.keys(p)[0], p]))('part with %s', (_name, part) => {
    expect(PartSchema.parse(part)).toEqual(part);
  });

  it('message, artifact, task', () => {
    expect(MessageSchema.parse(digestMessage)).toEqual(digestMessage);
    expect(ArtifactSchema.parse(digestArtifact)).toEqual(digestArtifact);
    expect(TaskSchema.parse(digestTask)).toEqual(digestTask);
  });

  it('stream responses', () => {
    const events = [
      { statusUpdate: { taskId: 't-42', contextId: 'ctx-9', status: { state: 'TASK_STATE_WORKING' } } },
      {
        artifactUpdate: {
          taskId: 't-42',
          contextId: 'ctx-9',
          append: true,
          lastChunk: false,
          artifact: { artifactId: 'a-1', parts: [{ text: '## Section 2\n' }] },
        },
      },
      { task: digestTask },
      { message: digestMessage },
    ];
    for (const event of events) expect(StreamResponseSchema.parse(event)).toEqual(event);
  });

  it('send message request with configuration', () => {
    const req = {
      message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'Q1 report please' }] },
      configuration: {
        acceptedOutputModes: ['application/pdf'],
        historyLength: 0,
        returnImmediately: true,
        taskPushNotificationConfig: {
          url: 'https://client.example.com/hook',
          token: 'opaque-123',
          authentication: { scheme: 'Bearer', credentials: 's3cr3t' },
        },
      },
    };
    expect(SendMessageRequestSchema.parse(req)).toEqual(req);
  });

  it('push notification config', () => {
    expect(TaskPushNotificationConfigSchema.parse(digestPushConfig)).toEqual(digestPushConfig);
    expect(CreateTaskPushNotificationConfigRequestSchema.parse(digestPushConfig)).toEqual(digestPushConfig);
  });

  it('list tasks response', () => {
    const res = {
      tasks: [{ id: 't-42', contextId: 'ctx-9', status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-05T10:05:00.000Z' } }],
      nextPageToken: '',
      pageSize: 50,
      totalSize: 1,
    };
    expect(ListTasksResponseSchema.parse(res)).toEqual(res);
  });

  it('agent card', () => {
    const card = AgentCardSchema.parse(digestCard);
    expect(card.name).toBe('Report Agent');
    expect(card.supportedInterfaces).toHaveLength(3);
    expect(card.securitySchemes?.bearer).toEqual({ httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
  });
});

// --- Required fields ---------------------------------------------------------------------------

describe('required fields', () => {
  it.each(['messageId', 'role', 'parts'] as const)('Message.%s', (field) => {
    expect(expectIssueAt(MessageSchema, without(digestMessage, field), [field])).toBe(`${field} is required`);
  });

  it('Message: empty messageId and empty parts fail', () => {
    expectIssueAt(MessageSchema, { ...digestMessage, messageId: '' }, ['messageId']);
    expectIssueAt(MessageSchema, { ...digestMessage, parts: [] }, ['parts']);
  });

  it.each(['artifactId', 'parts'] as const)('Artifact.%s', (field) => {
    expectIssueAt(ArtifactSchema, without(digestArtifact, field), [field]);
  });

  it.each(['id', 'status'] as const)('Task.%s', (field) => {
    expectIssueAt(TaskSchema, without(digestTask, field), [field]);
  });

  it('Task.contextId is optional', () => {
    expect(TaskSchema.safeParse(without(digestTask, 'contextId')).success).toBe(true);
  });

  it('TaskStatus.state, including nested in a task', () => {
    expectIssueAt(TaskStatusSchema, {}, ['state']);
    expectIssueAt(TaskSchema, { id: 't', status: {} }, ['status', 'state']);
  });

  it('nested paths name the offending part', () => {
    const msg = { ...digestMessage, parts: [{ text: 'ok' }, { mediaType: 'text/plain' }] };
    expectIssueAt(MessageSchema, msg, ['parts', 1]);
    expectIssueAt(TaskSchema, { ...digestTask, history: [msg] }, ['history', 0, 'parts', 1]);
  });

  const statusUpdate = { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } };
  it.each(['taskId', 'contextId', 'status'] as const)('TaskStatusUpdateEvent.%s', (field) => {
    expectIssueAt(TaskStatusUpdateEventSchema, without(statusUpdate, field), [field]);
  });

  const artifactUpdate = { taskId: 't', contextId: 'c', artifact: digestArtifact };
  it.each(['taskId', 'contextId', 'artifact'] as const)('TaskArtifactUpdateEvent.%s', (field) => {
    expectIssueAt(TaskArtifactUpdateEventSchema, without(artifactUpdate, field), [field]);
  });

  it('TaskPushNotificationConfig.url and authentication.scheme', () => {
    expectIssueAt(TaskPushNotificationConfigSchema, without(digestPushConfig, 'url'), ['url']);
    expectIssueAt(TaskPushNotificationConfigSchema, { url: 'https://x', authentication: {} }, ['authentication', 'scheme']);
  });

  it.each(['name', 'description', 'version', 'supportedInterfaces', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills'] as const)(
    'AgentCard.%s',
    (field) => {
      expectIssueAt(AgentCardSchema, without(digestCard, field), [field]);
    },
  );

  it('AgentCard: required arrays need at least one entry', () => {
    for (const field of ['supportedInterfaces', 'defaultInputModes', 'defaultOutputModes', 'skills'] as const) {
      expectIssueAt(AgentCardSchema, { ...digestCard, [field]: [] }, [field]);
    }
  });

  it('AgentCard: nested interface and skill fields', () => {
    const card = {
      ...digestCard,
      supportedInterfaces: [{ url: 'https://a', protocolBinding: 'JSONRPC' }],
      skills: [{ id: 's', name: 'n', description: 'd', tags: [] }],
    };
    expectIssueAt(AgentCardSchema, card, ['supportedInterfaces', 0, 'protocolVersion']);
    expectIssueAt(AgentCardSchema, card, ['skills', 0, 'tags']);
  });

  it('request ids', () => {
    expectIssueAt(SendMessageRequestSchema, {}, ['message']);
    expectIssueAt(GetTaskRequestSchema, {}, ['id']);
    expectIssueAt(CancelTaskRequestSchema, { metadata: {} }, ['id']);
    expectIssueAt(SubscribeToTaskRequestSchema, { id: '' }, ['id']);
    expectIssueAt(GetTaskPushNotificationConfigRequestSchema, { id: 'p' }, ['taskId']);
    expectIssueAt(GetTaskPushNotificationConfigRequestSchema, { taskId: 't' }, ['id']);
    expectIssueAt(DeleteTaskPushNotificationConfigRequestSchema, { taskId: 't' }, ['id']);
    expectIssueAt(ListTaskPushNotificationConfigsRequestSchema, {}, ['taskId']);
    expectIssueAt(CreateTaskPushNotificationConfigRequestSchema, { url: 'https://x' }, ['taskId']);
  });

  it('params must be an object', () => {
    expect(expectIssueAt(GetTaskRequestSchema, undefined, [])).toBe('params is required');
    expect(expectIssueAt(GetTaskRequestSchema, [], [])).toBe('params must be a JSON object');
  });
});

// --- Part oneof --------------------------------------------------------------------------------

describe('Part', () => {
  const oneOfMessage = 'a part must have exactly one of text, raw, url, data';

  it('rejects zero content members', () => {
    expect(expectIssueAt(PartSchema, {}, [])).toBe(oneOfMessage);
    expect(expectIssueAt(PartSchema, { mediaType: 'text/plain', filename: 'a.txt' }, [])).toBe(oneOfMessage);
  });

  it('rejects two content members', () => {
    expect(expectIssueAt(PartSchema, { text: 'a', url: 'https://x' }, [])).toBe(oneOfMessage);
    expect(expectIssueAt(PartSchema, { text: 'a', data: null }, [])).toBe(oneOfMessage);
  });

  it('accepts data of any JSON type, including null', () => {
    for (const data of [null, 0, false, '', [], [1, 'two'], { nested: { x: null } }]) {
      expect(PartSchema.parse({ data })).toEqual({ data });
    }
  });

  it('accepts an empty text (the ProtoJSON default for the set member)', () => {
    expect(PartSchema.parse({ text: '' })).toEqual({ text: '' });
  });

  it('validates raw as base64, standard or URL-safe, padding optional', () => {
    for (const raw of ['', 'iVBORw0KGgo=', 'iVBORw0KGgo', 'AB==', 'AB', 'ABC', '+/+/', '-_-_', 'a-_b']) {
      expect(PartSchema.safeParse({ raw }).success).toBe(true);
    }
    for (const raw of ['A', 'A=', 'AB=', 'A===', '====', 'ab cd', 'ab+_', 'é', 'AB==AB']) {
      expect(isBase64(raw)).toBe(false);
      expectIssueAt(PartSchema, { raw }, ['raw']);
    }
  });

  it('reports wrong member types at the member', () => {
    expect(expectIssueAt(PartSchema, { text: 5 }, ['text'])).toBe('text must be a string');
  });

  it('narrows by key in TypeScript', () => {
    const part: Part = PartSchema.parse({ url: 'https://x', filename: 'x.pdf' });
    const kind = 'text' in part ? 'text' : 'url' in part ? part.url : 'other';
    expect(kind).toBe('https://x');
  });
});

// --- Enums -------------------------------------------------------------------------------------

describe('enums', () => {
  it('accepts every v1.0 task state', () => {
    for (const s of TaskStateSchema.options) expect(TaskStateSchema.parse(s)).toBe(s);
    expect(TaskStateSchema.options).toHaveLength(8);
  });

  it.each(['TASK_STATE_UNSPECIFIED', 'completed', 'TASK_STATE_CANCELLED', 3])('rejects task state %p', (state) => {
    expect(TaskStateSchema.safeParse(state).success).toBe(false);
    expectIssueAt(TaskStatusSchema, { state }, ['state']);
  });

  it('roles', () => {
    expect(RoleSchema.parse('ROLE_AGENT')).toBe('ROLE_AGENT');
    for (const role of ['ROLE_UNSPECIFIED', 'user', 'agent']) {
      expectIssueAt(MessageSchema, { ...digestMessage, role }, ['role']);
    }
  });

  it('ListTasks status filter', () => {
    expect(ListTasksRequestSchema.parse({ status: 'TASK_STATE_WORKING' })).toEqual({ status: 'TASK_STATE_WORKING' });
    expectIssueAt(ListTasksRequestSchema, { status: 'TASK_STATE_UNSPECIFIED' }, ['status']);
    expectIssueAt(ListTasksRequestSchema, { status: 'working' }, ['status']);
  });
});

// --- Integer ranges ----------------------------------------------------------------------------

describe('integer ranges', () => {
  it('historyLength >= 0 and integral', () => {
    expect(GetTaskRequestSchema.parse({ id: 't', historyLength: 0 })).toEqual({ id: 't', historyLength: 0 });
    expect(GetTaskRequestSchema.parse({ id: 't', historyLength: 10 }).historyLength).toBe(10);
    expect(expectIssueAt(GetTaskRequestSchema, { id: 't', historyLength: -1 }, ['historyLength'])).toBe('historyLength must be >= 0');
    expectIssueAt(GetTaskRequestSchema, { id: 't', historyLength: 1.5 }, ['historyLength']);
    expectIssueAt(GetTaskRequestSchema, { id: 't', historyLength: '3' }, ['historyLength']);
    expectIssueAt(ListTasksRequestSchema, { historyLength: -5 }, ['historyLength']);
    expectIssueAt(SendMessageRequestSchema, { message: digestMessage, configuration: { historyLength: -1 } }, ['configuration', 'historyLength']);
  });

  it('ListTasks pageSize between 1 and 100', () => {
    for (const pageSize of [1, 50, 100]) expect(ListTasksRequestSchema.parse({ pageSize }).pageSize).toBe(pageSize);
    for (const pageSize of [0, 101, -1]) {
      expect(expectIssueAt(ListTasksRequestSchema, { pageSize }, ['pageSize'])).toBe('pageSize must be between 1 and 100');
    }
    expectIssueAt(ListTasksRequestSchema, { pageSize: 10.5 }, ['pageSize']);
  });

  it('ListTaskPushNotificationConfigs pageSize is a non-negative integer', () => {
    expect(ListTaskPushNotificationConfigsRequestSchema.parse({ taskId: 't', pageSize: 0 }).pageSize).toBe(0);
    expectIssueAt(ListTaskPushNotificationConfigsRequestSchema, { taskId: 't', pageSize: -1 }, ['pageSize']);
    expectIssueAt(ListTaskPushNotificationConfigsRequestSchema, { taskId: 't', pageSize: 2.5 }, ['pageSize']);
  });
});

// --- Timestamps --------------------------------------------------------------------------------

describe('timestamps', () => {
  it('accepts RFC 3339 with Z or an offset', () => {
    for (const ts of ['2026-01-05T10:00:00Z', '2026-01-05T10:00:00.000Z', '2026-01-05T10:00:00.123456+02:00']) {
      expect(TimestampSchema.safeParse(ts).success).toBe(true);
    }
  });

  it('rejects dates without time or zone', () => {
    for (const ts of ['2026-01-05', '2026-01-05T10:00:00', 'yesterday', 1736071200000]) {
      expect(TimestampSchema.safeParse(ts).success).toBe(false);
    }
    expectIssueAt(TaskStatusSchema, { state: 'TASK_STATE_WORKING', timestamp: 'now' }, ['timestamp']);
    expectIssueAt(ListTasksRequestSchema, { statusTimestampAfter: '2026-01-05' }, ['statusTimestampAfter']);
  });
});

// --- Oneof wrappers ----------------------------------------------------------------------------

describe('oneof wrappers', () => {
  it('StreamResponse needs exactly one member', () => {
    expectIssueAt(StreamResponseSchema, {}, []);
    expectIssueAt(StreamResponseSchema, { task: digestTask, message: digestMessage }, []);
    const event: StreamResponse = StreamResponseSchema.parse({ message: digestMessage });
    expect('message' in event && event.message.messageId).toBe('m-1');
  });

  it('SendMessageResponse needs exactly one member', () => {
    expect(SendMessageResponseSchema.parse({ task: digestTask })).toEqual({ task: digestTask });
    expectIssueAt(SendMessageResponseSchema, {}, []);
    expectIssueAt(SendMessageResponseSchema, { task: digestTask, message: digestMessage }, []);
  });

  it('SecurityScheme and OAuthFlows need exactly one member', () => {
    expectIssueAt(SecuritySchemeSchema, {}, []);
    expectIssueAt(SecuritySchemeSchema, { mtlsSecurityScheme: {}, httpAuthSecurityScheme: { scheme: 'Bearer' } }, []);
    const oauth = {
      oauth2SecurityScheme: {
        flows: { clientCredentials: { tokenUrl: 'https://auth/token', scopes: { read: 'Read access' } } },
      },
    };
    expect(SecuritySchemeSchema.parse(oauth)).toEqual(oauth);
    expectIssueAt(OAuthFlowsSchema, {}, []);
    expectIssueAt(OAuthFlowsSchema, { clientCredentials: { scopes: {} } }, ['clientCredentials', 'tokenUrl']);
    expectIssueAt(SecuritySchemeSchema, { apiKeySecurityScheme: { name: 'X-Key' } }, ['apiKeySecurityScheme', 'location']);
  });
});

// --- Unknown fields, optional params, defaults ----------------------------------------------

describe('unknown fields and defaults', () => {
  it('strips unknown fields at every level', () => {
    const input = {
      ...digestTask,
      kind: 'task',
      status: { state: 'TASK_STATE_COMPLETED', final: true },
      history: [{ ...digestMessage, kind: 'message', parts: [{ text: 'x', kind: 'text' }] }],
    };
    const task = TaskSchema.parse(input);
    expect(task).not.toHaveProperty('kind');
    expect(task.status).toEqual({ state: 'TASK_STATE_COMPLETED' });
    expect(task.history?.[0]).not.toHaveProperty('kind');
    expect(task.history?.[0].parts[0]).toEqual({ text: 'x' });
    expect(AgentCardSchema.parse({ ...digestCard, url: 'https://legacy', protocolVersion: '0.3.0' })).not.toHaveProperty('url');
  });

  it('keeps absent optional fields absent', () => {
    const task = TaskSchema.parse({ id: 't', status: { state: 'TASK_STATE_SUBMITTED' } });
    expect(task).toEqual({ id: 't', status: { state: 'TASK_STATE_SUBMITTED' } });
    expect(Object.keys(task)).toEqual(['id', 'status']);
    expect(task.artifacts).toBeUndefined();
  });

  it('metadata must be a JSON object', () => {
    expect(MessageSchema.parse({ ...digestMessage, metadata: { a: [1] } }).metadata).toEqual({ a: [1] });
    for (const metadata of [null, [], 'x']) expectIssueAt(MessageSchema, { ...digestMessage, metadata }, ['metadata']);
  });

  it('GetExtendedAgentCard params may be omitted', () => {
    expect(GetExtendedAgentCardRequestSchema.parse(undefined)).toEqual({});
    expect(GetExtendedAgentCardRequestSchema.parse({})).toEqual({});
    expect(GetExtendedAgentCardRequestSchema.parse({ tenant: 'acme' })).toEqual({ tenant: 'acme' });
    expect(GetExtendedAgentCardRequestSchema.safeParse({ tenant: 7 }).success).toBe(false);
  });

  it('security requirement lists default to empty when omitted', () => {
    const card = AgentCardSchema.parse({ ...digestCard, securityRequirements: [{ schemes: { bearer: {} } }, {}] });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }, { schemes: {} }]);
  });
});
