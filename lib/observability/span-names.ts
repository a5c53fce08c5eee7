/**
 * The kit's span names and attribute keys, each defined once (docs/operations.md, Traces, lists them). Operation spans follow the OpenTelemetry
 * semantic conventions for RPC; no span carries a message's content, a token or a credential: only ids, states, counts and error kinds.
 */

/** The gRPC service A2A v1.0 defines: operation spans are named `a2a.v1.A2AService/<Method>`. */
export const A2A_RPC_SERVICE = 'a2a.v1.A2AService';

export const A2A_SPANS = {
  /** Kind INTERNAL: one turn, from its start (lease, history) through execute() to its end. */
  turn: 'a2a.turn',
  /** Kind INTERNAL: one cancel, from the decision through the hook and the grace period to the answer. */
  cancel: 'a2a.cancel',
  /** Kind CLIENT: one webhook request of a push notification delivery. */
  pushAttempt: 'a2a.push.attempt',
  /** Kind INTERNAL: `router.openTaskPublisher()` for handed-off work; linked to the request that started the task. */
  publisherOpen: 'a2a.publisher.open',
} as const;

/** Span events: task store and lease calls on the kit's span that made them, and the steps of a cancel. */
export const A2A_SPAN_EVENTS = {
  /** `a2a.store.get`, `a2a.store.create`, `a2a.store.list` (updates are counted: `a2a.store.updates`). */
  storePrefix: 'a2a.store.',
  leaseAcquire: 'a2a.lease.acquire',
  leaseClaimExpired: 'a2a.lease.claim_expired',
  cancelHookReturned: 'a2a.cancel.hook.returned',
  cancelGraceOver: 'a2a.cancel.grace.over',
} as const;

export const A2A_SPAN_ATTRIBUTES = {
  rpcSystem: 'rpc.system',
  rpcService: 'rpc.service',
  rpcMethod: 'rpc.method',
  /** `jsonrpc` or `http+json`. */
  binding: 'a2a.binding',
  /** `1.0` or `0.3`. */
  protocolVersion: 'a2a.protocol.version',
  taskId: 'a2a.task.id',
  contextId: 'a2a.context.id',
  /** The state the answer carried (`completed`, `input_required`, ...), or `message` for a Message reply. */
  taskState: 'a2a.task.state',
  /** The A2A error's kind (`TaskNotFound`, `InvalidParams`, ...), `internal` for anything else. */
  errorType: 'error.type',
  /** A message for a task that exists: a follow-up. */
  followUp: 'a2a.turn.follow_up',
  /** Why a turn was resumed by executor.resume() (a turn left mid-way by a replica that died). */
  resumed: 'a2a.turn.resumed',
  /** How a turn ended: `message`, `error`, or the state the task reached. */
  turnOutcome: 'a2a.turn.outcome',
  /** `canceled`, `not_cancelable` or `error`. */
  cancelOutcome: 'a2a.cancel.outcome',
  pushConfigId: 'a2a.push.config.id',
  /** 1 for the first attempt of a delivery. */
  pushAttempt: 'a2a.push.attempt',
  /** `delivered`, `rejected`, `timeout`, `error` or `refused`. */
  pushOutcome: 'a2a.push.outcome',
  httpMethod: 'http.request.method',
  httpStatus: 'http.response.status_code',
  /** The webhook's host only: a path or query may carry secrets. */
  serverAddress: 'server.address',
  /** A store or lease call's duration, in milliseconds (on its event). */
  durationMs: 'a2a.duration_ms',
  /** How many store updates (one per committed event) were made under the span. */
  storeUpdates: 'a2a.store.updates',
  /** A store call's operation (on its event). */
  storeOperation: 'a2a.store.operation',
  /** Whether a lease was acquired (on its event). */
  leaseAcquired: 'a2a.lease.acquired',
  /** On a link: what the linked span is (`task.origin`, `turn.followed`). */
  linkRole: 'a2a.link',
} as const;

/** OpenTelemetry's SpanKind and SpanStatusCode values (stable numbers of the API). */
export const SPAN_KIND = { internal: 0, server: 1, client: 2 } as const;
export const SPAN_STATUS_ERROR = 2;

/** `TASK_STATE_INPUT_REQUIRED` → `input_required`, as the metrics write states. */
export function shortState(state: string): string {
  return state.startsWith('TASK_STATE_') ? state.slice('TASK_STATE_'.length).toLowerCase() : state.toLowerCase();
}
