/** How an error reads on the wire per binding and version (status, content type, body); lib/context/reply.ts sends it. */
import { A2AError, A2AMiddlewareError, ERROR_TABLE, errorDetails } from '../errors.js';
import { errorEnvelope, type JsonRpcId } from './jsonrpc.js';
import { v03RestErrorBody } from './v0_3/rest.js';

/** Which binding an error reply speaks ('rest-v0.3': v0.3 HTTP+JSON under `/v1/...`, compatibility). */
export type ErrorBinding = 'jsonrpc' | 'rest' | 'rest-v0.3';

const CONTENT_TYPE: Record<ErrorBinding, string> = { jsonrpc: 'application/json', rest: 'application/a2a+json', 'rest-v0.3': 'application/json' };

/** HTTP+JSON: the table's status. JSON-RPC: 200, except 401 (the challenge), 413, 503 and a middleware's rejection. */
export function httpStatusOf(error: A2AError, binding: ErrorBinding): number {
  if (binding !== 'jsonrpc' || error instanceof A2AMiddlewareError) return error.httpStatus;
  // Unavailable (shutting down, store down) keeps its 503 so that load balancers and clients retry.
  return error.kind === 'Unauthenticated' || error.kind === 'PayloadTooLarge' || error.kind === 'Unavailable' ? error.httpStatus : 200;
}

/** An HTTP status the table has no kind for (405, 404, the host's 403); `status` is the google.rpc.Status one. */
export interface StatusOverride {
  readonly http: number;
  readonly status: string;
}

export function statusBody(error: A2AError, override?: StatusOverride) {
  return {
    error: {
      code: override?.http ?? error.httpStatus,
      status: override?.status ?? ERROR_TABLE[error.kind].status,
      message: error.message,
      details: errorDetails(error) ?? [],
    },
  };
}

/** Status, content type and body of `error` in `binding`; `id` is the JSON-RPC request id. */
export function renderError(
  error: A2AError,
  binding: ErrorBinding,
  id: JsonRpcId = null,
  override?: StatusOverride,
): { status: number; contentType: string; body: object } {
  return {
    status: override?.http ?? httpStatusOf(error, binding),
    contentType: CONTENT_TYPE[binding],
    body: binding === 'jsonrpc' ? errorEnvelope(id, error) : binding === 'rest' ? statusBody(error, override) : v03RestErrorBody(error),
  };
}
