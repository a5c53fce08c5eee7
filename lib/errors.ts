/** The kit's errors and their one table (JSON-RPC code, HTTP status, google.rpc status, reason); one writer, lib/context/reply.ts, answers them. */

const A2A_ERROR_DOMAIN = 'a2a-protocol.org';

/** `ErrorInfo.domain` for the kit's own reasons (A2A's own errors use `a2a-protocol.org`). */
export const A2A_KIT_ERROR_DOMAIN = 'a2a-express-kit';

/** One kind of error, as every binding answers it. */
export interface A2AErrorSpec {
  /** JSON-RPC `error.code`. */
  readonly code: number;
  /** HTTP status in the HTTP+JSON binding (JSON-RPC answers 200 but for a few; see lib/protocol/error-body.ts). */
  readonly http: number;
  /** `google.rpc.Status.status`. */
  readonly status: string;
  /** `ErrorInfo.reason`: the spec's, for A2A's own errors. */
  readonly reason: string | undefined;
  readonly message: string;
}

/** Every error the kit answers with, keyed by a stable name. */
export const ERROR_TABLE = {
  ParseError: { code: -32700, http: 400, status: 'INVALID_ARGUMENT', reason: undefined, message: 'Parse error: the body is not valid JSON' },
  InvalidRequest: { code: -32600, http: 400, status: 'INVALID_ARGUMENT', reason: undefined, message: 'Invalid request' },
  MethodNotFound: { code: -32601, http: 404, status: 'NOT_FOUND', reason: undefined, message: 'Method not found' },
  InvalidParams: { code: -32602, http: 400, status: 'INVALID_ARGUMENT', reason: undefined, message: 'Invalid params' },
  Internal: { code: -32603, http: 500, status: 'INTERNAL', reason: undefined, message: 'Internal error' },
  TaskNotFound: { code: -32001, http: 404, status: 'NOT_FOUND', reason: 'TASK_NOT_FOUND', message: 'Task not found' },
  TaskNotCancelable: { code: -32002, http: 400, status: 'FAILED_PRECONDITION', reason: 'TASK_NOT_CANCELABLE', message: 'Task cannot be canceled' },
  PushNotificationNotSupported: {
    code: -32003,
    http: 400,
    status: 'FAILED_PRECONDITION',
    reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
    message: 'Push notifications are not supported',
  },
  UnsupportedOperation: {
    code: -32004,
    http: 400,
    status: 'FAILED_PRECONDITION',
    reason: 'UNSUPPORTED_OPERATION',
    message: 'This operation is not supported',
  },
  ContentTypeNotSupported: {
    code: -32005,
    http: 400,
    status: 'INVALID_ARGUMENT',
    reason: 'CONTENT_TYPE_NOT_SUPPORTED',
    message: 'Content type not supported',
  },
  InvalidAgentResponse: {
    code: -32006,
    http: 500,
    status: 'INTERNAL',
    reason: 'INVALID_AGENT_RESPONSE',
    message: 'The agent produced an invalid response',
  },
  ExtendedAgentCardNotConfigured: {
    code: -32007,
    http: 400,
    status: 'FAILED_PRECONDITION',
    reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
    message: 'No extended agent card is configured',
  },
  ExtensionSupportRequired: {
    code: -32008,
    http: 400,
    status: 'FAILED_PRECONDITION',
    reason: 'EXTENSION_SUPPORT_REQUIRED',
    message: 'A required extension was not requested',
  },
  VersionNotSupported: {
    code: -32009,
    http: 400,
    status: 'FAILED_PRECONDITION',
    reason: 'VERSION_NOT_SUPPORTED',
    message: 'Protocol version not supported',
  },
  Unavailable: { code: -32603, http: 503, status: 'UNAVAILABLE', reason: undefined, message: 'The service is temporarily unavailable' },
  Unauthenticated: { code: -32600, http: 401, status: 'UNAUTHENTICATED', reason: undefined, message: 'Authentication required' },
  PayloadTooLarge: { code: -32600, http: 413, status: 'INVALID_ARGUMENT', reason: undefined, message: 'Request body too large' },
} as const satisfies Record<string, A2AErrorSpec>;

export type A2AErrorName = keyof typeof ERROR_TABLE;

/**
 * The kit's own reasons, for requests a middleware rejects before any A2A method runs. Each is a kind of ERROR_TABLE (which gives its codes and
 * statuses) with its own message. The spec has no JSON-RPC code for authentication failures and reserves -32001…-32099 for its own errors, so
 * credential failures are `Unauthenticated` (-32600) and HTTP 401 + `WWW-Authenticate` carry the meaning; the `ErrorInfo.reason` is the stable reason
 * below.
 */
export const A2A_MIDDLEWARE_ERRORS = {
  A2A_AUTH_REQUIRED: { kind: 'Unauthenticated', message: 'Authentication required' },
  A2A_AUTH_INVALID: { kind: 'Unauthenticated', message: 'Invalid credentials' },
  A2A_AUTH_UNAVAILABLE: { kind: 'Unavailable', message: 'Authentication is temporarily unavailable' },
  A2A_TENANT_REQUIRED: { kind: 'InvalidParams', message: 'A tenant is required' },
  A2A_INVALID_TENANT: { kind: 'InvalidParams', message: 'Invalid tenant' },
  A2A_INVALID_REQUEST_ID: { kind: 'InvalidRequest', message: 'Invalid request id' },
  A2A_BODY_TOO_LARGE: { kind: 'PayloadTooLarge', message: 'Request body too large' },
} as const satisfies Record<string, { kind: A2AErrorName; message: string }>;

export type A2AMiddlewareReason = keyof typeof A2A_MIDDLEWARE_ERRORS;

/** One offending field, as google.rpc.BadRequest's fieldViolations. */
export interface FieldViolation {
  readonly field: string;
  readonly description: string;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
/** Every 503 says when to try again: soon, since an outage or a drain is answered within one store deadline. */
const RETRY_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'Retry-After': '1' });

/** An error the client may see: its message is safe to send. */
export class A2AError extends Error {
  readonly kind: A2AErrorName;
  readonly code: number;
  readonly httpStatus: number;
  /** ErrorInfo metadata (string values only, per google.rpc.ErrorInfo). */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly fieldViolations?: readonly FieldViolation[];
  /** ErrorInfo reason: the spec's for A2A errors, the kit's own for middleware rejections. */
  readonly reason: string | undefined;
  /** ErrorInfo domain. */
  readonly domain: string;
  /** Response headers that belong to this error (`WWW-Authenticate`, `Retry-After`), in every binding. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    kind: A2AErrorName,
    message?: string,
    extra?: {
      metadata?: Record<string, string>;
      fieldViolations?: FieldViolation[];
      cause?: unknown;
      reason?: string;
      domain?: string;
      headers?: Readonly<Record<string, string>>;
    },
  ) {
    super(message ?? ERROR_TABLE[kind].message, extra?.cause === undefined ? undefined : { cause: extra.cause });
    this.name = `A2AError(${kind})`;
    this.kind = kind;
    this.code = ERROR_TABLE[kind].code;
    this.httpStatus = ERROR_TABLE[kind].http;
    this.metadata = extra?.metadata;
    this.fieldViolations = extra?.fieldViolations;
    this.reason = extra?.reason ?? ERROR_TABLE[kind].reason;
    this.domain = extra?.domain ?? A2A_ERROR_DOMAIN;
    this.headers = extra?.headers ?? (kind === 'Unavailable' ? RETRY_HEADERS : NO_HEADERS);
  }
}

export interface A2AMiddlewareErrorInit {
  /** Response headers that belong to this error (e.g. `WWW-Authenticate`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Extra `ErrorInfo.metadata` (string values only; never credentials). */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

/**
 * A request rejected by a middleware: an A2AError of its reason's kind (so one writer answers it in any binding) with the stable `reason` in the
 * kit's domain, and headers to send.
 */
export class A2AMiddlewareError extends A2AError {
  declare readonly reason: A2AMiddlewareReason;
  /** `google.rpc.Status.status` for HTTP+JSON bodies. */
  readonly status: string;

  constructor(reason: A2AMiddlewareReason, message?: string, init: A2AMiddlewareErrorInit = {}) {
    const { kind, message: fallback } = A2A_MIDDLEWARE_ERRORS[reason];
    super(kind, message ?? fallback, {
      ...(init.metadata ? { metadata: { ...init.metadata } } : {}),
      ...(init.cause === undefined ? {} : { cause: init.cause }),
      ...(init.headers ? { headers: init.headers } : {}),
      reason,
      domain: A2A_KIT_ERROR_DOMAIN,
    });
    this.name = 'A2AMiddlewareError';
    this.status = ERROR_TABLE[kind].status;
  }
}

/** TaskNotFound for an id: the same bytes whether the task never existed or belongs to someone else. */
export function taskNotFound(taskId: string): A2AError {
  return new A2AError('TaskNotFound', `Task ${taskId} not found`, { metadata: { taskId } });
}

/** CancelTask on a task that another terminal state already ended. */
export function taskNotCancelable(task: { readonly id: string; readonly status: { readonly state: string } }): A2AError {
  return new A2AError('TaskNotCancelable', `Task ${task.id} is in ${task.status.state} and cannot be canceled`, { metadata: { taskId: task.id } });
}

/** A message for a task whose turn is running (here or on another replica). */
export function busyElsewhere(taskId: string): A2AError {
  return new A2AError('UnsupportedOperation', `Task ${taskId} is processing another message; send this one when it asks for input`);
}

/** A message for a task that takes none now; `state`: the state it is in, or how it is described. */
export function acceptsNoMoreMessages(taskId: string, state = 'a terminal state'): A2AError {
  return new A2AError('UnsupportedOperation', `Task ${taskId} is in ${state} and accepts no more messages`);
}

/**
 * What a message or subscription gets while the server shuts down (router.close()): 503 in every binding, with `Retry-After` and an ErrorInfo
 * `A2A_SHUTTING_DOWN` in the kit's domain (A2A has no reason for it), so that a client can tell a drain from a store outage.
 */
export function shuttingDown(): A2AError {
  return new A2AError('Unavailable', 'This agent is shutting down; send the message again later', {
    reason: 'A2A_SHUTTING_DOWN',
    domain: A2A_KIT_ERROR_DOMAIN,
  });
}

export function invalidParams(violations: FieldViolation[]): A2AError {
  const text = violations.map((v) => (v.field ? `${v.field}: ${v.description}` : v.description)).join('; ');
  return new A2AError('InvalidParams', `Invalid params: ${text}`, { fieldViolations: violations });
}

/** A seam call that did not answer within its deadline (storeTimeoutMs); answered as unavailable. */
export class SeamTimeoutError extends Error {
  constructor(
    readonly call: string,
    readonly ms: number,
  ) {
    super(`${call} did not answer within ${ms} ms`);
    this.name = 'SeamTimeoutError';
  }
}

/** Any thrown value as an A2AError; a seam's timeout is unavailable, other unexpected ones a generic Internal error (no text leaks). */
export function toA2AError(error: unknown): A2AError {
  if (error instanceof A2AError) return error;
  return new A2AError(error instanceof SeamTimeoutError ? 'Unavailable' : 'Internal');
}

/** The `error.data` array of a JSON-RPC error: google.rpc detail objects, each with `@type`. */
export function errorDetails(error: A2AError): unknown[] | undefined {
  const details: unknown[] = [];
  if (error.reason) {
    details.push({
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: error.reason,
      domain: error.domain,
      ...(error.metadata ? { metadata: error.metadata } : {}),
    });
  }
  if (error.fieldViolations?.length) {
    details.push({ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: error.fieldViolations });
  }
  return details.length ? details : undefined;
}
