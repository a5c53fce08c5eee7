/**
 * The JSON-RPC 2.0 codec, v1.0 (POST <mount>): the method and params from the envelope, results as success envelopes, errors as error envelopes with
 * the request's id, stream events as success envelopes in SSE. Serves every row of the operation table under its v1.0 name.
 */
import type { Request, Response } from 'express';
import { writeError, writeJson } from '../context/reply.js';
import { A2AError } from '../errors.js';
import type { Logger } from '../options.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { withJsonNames } from '../protocol/field-names.js';
import {
  EnvelopeError,
  errorResponse,
  parseParams,
  readEnvelope,
  successResponse,
  type JsonRpcId,
  type JsonRpcRequest,
} from '../protocol/jsonrpc.js';
import { negotiateVersion, type VersionPolicy } from '../protocol/version.js';
import { activate } from './negotiate.js';
import { OPERATIONS, type A2AMethod, type PresentCard } from './operations.js';
import type { Codec, Plan } from './serve.js';
import type { SseLimits } from './sse.js';
import type { StreamEncoding, StreamSettings } from './stream.js';
import type { IncomingMessage } from 'node:http';

interface JsonRpcCodecOptions {
  readonly extensions: ExtensionNegotiator;
  /** Versions served besides 1.0: named in the VersionNotSupported of a version neither serves. */
  readonly policy: VersionPolicy;
  readonly streamLimits: SseLimits;
  readonly logger: Logger;
  readonly presentCard: PresentCard;
}

/**
 * A stream's success envelope around each event's JSON, as successResponse writes it (key order included): made once per stream, so the event itself
 * is encoded once for all streams.
 */
export function jsonRpcEventEnvelope(id: JsonRpcId): readonly [string, string] {
  return [`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`, '}'];
}

/** Every event a success envelope, the final error an error envelope, both with the request's id. */
const JSONRPC_STREAM: StreamEncoding = {
  binding: 'jsonrpc',
  payload: (event) => JSON.stringify(event),
  envelope: jsonRpcEventEnvelope,
  error: errorResponse,
};

/** The envelope of a JSON-RPC request (either version): its id and method; throws InvalidRequest. */
export function readHead(req: Request): JsonRpcRequest {
  try {
    return readEnvelope(req.body);
  } catch (error) {
    // Only on the failure path: a body the router did not parse as JSON is refused for its type.
    throw notJsonBody(req) ?? error;
  }
}

/** An error answered as an error envelope: the id the envelope had, even when it was refused. */
export function writeJsonRpcError(req: Request, res: Response, thrown: unknown, id: JsonRpcId, logger: Logger): void {
  writeError(req, res, thrown, 'jsonrpc', thrown instanceof EnvelopeError ? thrown.id : id, logger);
}

export const writeJsonRpcResult = (res: Response, id: JsonRpcId, result: unknown): void => writeJson(res, 200, successResponse(id, result));

export function jsonRpcCodec(options: JsonRpcCodecOptions): Codec<JsonRpcRequest> {
  const { extensions, policy, logger } = options;
  const stream: StreamSettings = { encoding: JSONRPC_STREAM, limits: options.streamLimits, logger };
  const plans = new Map<string, Plan<JsonRpcRequest>>();
  for (const method of Object.keys(OPERATIONS) as A2AMethod[]) {
    const operation = OPERATIONS[method];
    plans.set(method, {
      operation,
      read: (_req, head) => parseParams(operation.schema, withJsonNames(method, head.params)),
      stream: operation.kind === 'stream' ? stream : undefined,
      // google.protobuf.Empty: `null` as a result, as both official SDK servers answer.
      present: method === 'DeleteTaskPushNotificationConfig' ? () => null : undefined,
    });
  }
  return {
    version: '1.0',
    presentCard: options.presentCard,
    statesTenant: true,
    head: readHead,
    idOf: (head) => head.id,
    negotiate(req, res, requested) {
      negotiateVersion(requested, policy);
      return activate(req, res, extensions, '1.0');
    },
    plan: (head) => plans.get(head.method),
    unknownMethod: (head) => new A2AError('MethodNotFound', `Method not found: ${head.method}`),
    writeResult: writeJsonRpcResult,
    writeError: (req, res, thrown, id) => writeJsonRpcError(req, res, thrown, id, logger),
  };
}

/** The media types the router's body parser reads as JSON (lib/express/dispatcher.ts). */
const isJsonType = (type: string): boolean => type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));

const hasBody = (req: IncomingMessage): boolean => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';

/**
 * InvalidRequest naming the Content-Type when the request has a body that is not declared JSON: -32600 as before, since the request is not a JSON-RPC
 * request object (A2A's ContentTypeNotSupported is for a part's media type); undefined for a JSON body.
 */
function notJsonBody(req: IncomingMessage): EnvelopeError | undefined {
  const header = req.headers['content-type'];
  const type = header?.split(';', 1)[0].trim().toLowerCase();
  if (type !== undefined ? isJsonType(type) : !hasBody(req)) return undefined;
  const got = header ? `Content-Type ${header}` : 'a body without a Content-Type';
  return new EnvelopeError(null, `${got} is not read as JSON: send the JSON-RPC 2.0 request object with Content-Type application/json`);
}
