/**
 * The HTTP+JSON codec, v1.0 (§11): the dispatcher matched the operation from the method and path; params come from the body (POST) or the query
 * string, with the path's task id and `/{tenant}` on top; answers are `application/a2a+json`, errors a `google.rpc.Status`, streams SSE of bare
 * StreamResponses.
 */
import type { Request } from 'express';
import { writeError, writeJson } from '../context/reply.js';
import { A2AError, invalidParams } from '../errors.js';
import type { Logger } from '../options.js';
import { statusBody } from '../protocol/error-body.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { withJsonNames } from '../protocol/field-names.js';
import { parseParams } from '../protocol/jsonrpc.js';
import { pathSegment, queryParams, type RestMatch } from '../protocol/rest.js';
import { negotiateCall } from './call.js';
import { queryOf } from './negotiate.js';
import { headerOf } from '../context/node-request.js';
import { OPERATIONS, type A2AMethod, type Operation, type PresentCard } from './operations.js';
import type { Codec, Plan } from './serve.js';
import type { SseLimits } from './sse.js';
import type { StreamEncoding, StreamSettings } from './stream.js';

/** The binding's media type (§11.1), on every JSON answer. */
const A2A_JSON = 'application/a2a+json';

interface RestCodecOptions {
  readonly extensions: ExtensionNegotiator;
  readonly streamLimits: SseLimits;
  readonly logger: Logger;
  readonly presentCard: PresentCard;
}

/** Every event a bare StreamResponse, the final error a google.rpc.Status (§11.7). */
const REST_STREAM: StreamEncoding = {
  binding: 'rest',
  payload: (event) => JSON.stringify(event),
  error: (_id, error) => JSON.stringify(statusBody(error)),
};

/** Request bodies the binding reads (§11.1; `application/json` too, as the official client sends it). */
const BODY_TYPES = new Set(['application/a2a+json', 'application/json']);

/**
 * ContentTypeNotSupported when `req` carries a body that is not JSON by its `Content-Type` (the router answers it with 415); undefined for a JSON
 * body or none (a cancel or subscribe POST may be empty).
 */
export function unsupportedMediaType(req: Request): A2AError | undefined {
  const headers = req.headers;
  const length = headers['content-length'];
  if (headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return undefined;
  const header = headers['content-type'];
  const type = header?.split(';', 1)[0].trim().toLowerCase();
  if (type !== undefined && BODY_TYPES.has(type)) return undefined;
  return new A2AError(
    'ContentTypeNotSupported',
    `${header ? `Content-Type ${header}` : 'A body without a Content-Type'} is not supported: send application/a2a+json or application/json`,
    { metadata: { contentType: header ?? '' } },
  );
}

/** A POST body as params: absent reads as `{}`, anything but an object is refused. */
function bodyParams(operation: A2AMethod, body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidParams([{ field: 'body', description: 'must be a JSON object' }]);
  return { ...(withJsonNames(operation, body) as Record<string, unknown>) };
}

/** The params of `match`: body or query, then what the path binds (copies in the body or query are ignored). */
function restParams(req: Request, match: RestMatch, push: boolean): Record<string, unknown> {
  const operation = match.operation;
  const input = match.hasBody ? bodyParams(operation, req.body) : queryParams(operation, queryOf(req));
  // A push config's path binds the task as `taskId` and the config as `id`; any other task's as `id`.
  if (push) {
    input.taskId = pathSegment(match.taskId!, 'taskId');
    if (match.configId !== undefined) input.id = pathSegment(match.configId, 'id');
  } else if (match.taskId !== undefined) input.id = pathSegment(match.taskId, 'id');
  if (match.tenant !== undefined) input.tenant = pathSegment(match.tenant, 'tenant');
  return input;
}

export function restCodec(options: RestCodecOptions): Codec<RestMatch> {
  const { extensions, logger } = options;
  const stream: StreamSettings = { encoding: REST_STREAM, limits: options.streamLimits, logger };
  const plans = {} as Record<A2AMethod, Plan<RestMatch>>;
  for (const method of Object.keys(OPERATIONS) as A2AMethod[]) {
    const operation: Operation = OPERATIONS[method];
    plans[method] = {
      operation,
      read: (req, match) => parseParams(operation.schema, restParams(req, match, operation.push)),
      stream: operation.kind === 'stream' ? stream : undefined,
      // google.protobuf.Empty: `{}`.
      present: method === 'DeleteTaskPushNotificationConfig' ? () => ({}) : undefined,
    };
  }
  return {
    version: '1.0',
    presentCard: options.presentCard,
    statesTenant: true,
    head: (_req, match) => match!,
    idOf: () => null,
    negotiate(req, res, requested) {
      // HTTP+JSON 1.0 serves 1.0 only: v0.3 has its own routes (`/v1/...`).
      const active = negotiateCall(extensions, requested, headerOf(req, 'a2a-extensions'));
      if (active.length > 0) res.setHeader('A2A-Extensions', active.join(', '));
      return active;
    },
    plan: (match) => plans[match.operation],
    // The dispatcher matches served operations only.
    unknownMethod: (match) => new A2AError('MethodNotFound', `Method not found: ${match.operation}`),
    writeResult: (res, _id, result) => writeJson(res, 200, JSON.stringify(result), A2A_JSON),
    writeError: (req, res, thrown) => writeError(req, res, thrown, 'rest', null, logger),
  };
}
