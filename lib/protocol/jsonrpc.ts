/** JSON-RPC 2.0 envelopes: reading a request, and the one place that builds responses (`id ?? null`: 0 and "" are ids). */
import type { z } from 'zod';
import { A2AError, errorDetails, invalidParams, type FieldViolation } from '../errors.js';

export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  readonly id: JsonRpcId;
  readonly method: string;
  readonly params: unknown;
}

const isUsableId = (id: unknown): id is JsonRpcId => typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) || id === null;

/** The id to answer an error with, from a body that may not be a valid request (null when none is usable). */
export function requestIdOf(body: unknown): JsonRpcId {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  return isUsableId(id) ? id : null;
}

/** Reads a parsed body as a JSON-RPC request; throws InvalidRequest (with the id when it is usable). */
export function readEnvelope(body: unknown): JsonRpcRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new EnvelopeError(null, Array.isArray(body) ? 'Batch requests are not supported' : 'The body must be a JSON-RPC 2.0 request object');
  }
  const { jsonrpc, id, method, params } = body as Record<string, unknown>;
  const usableId = isUsableId(id) ? id : null;
  if (jsonrpc !== '2.0') throw new EnvelopeError(usableId, 'jsonrpc must be "2.0"');
  if (id === undefined) throw new EnvelopeError(null, 'id is required (notifications are not supported)');
  if (usableId !== id) throw new EnvelopeError(null, 'id must be a string, a number or null');
  if (typeof method !== 'string' || method.length === 0) throw new EnvelopeError(usableId, 'method must be a non-empty string');
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
    throw new EnvelopeError(usableId, 'params must be a JSON object', 'InvalidParams');
  }
  return { id: usableId, method, params };
}

export class EnvelopeError extends A2AError {
  readonly id: JsonRpcId;
  constructor(id: JsonRpcId, message: string, kind: 'InvalidRequest' | 'InvalidParams' = 'InvalidRequest') {
    super(
      kind,
      kind === 'InvalidRequest' ? `Invalid request: ${message}` : `Invalid params: ${message}`,
      kind === 'InvalidParams' ? { fieldViolations: [{ field: 'params', description: message }] } : undefined,
    );
    this.id = id;
  }
}

/** `message.parts[0].text` from a zod issue path. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** Parses `params` with `schema`, or throws InvalidParams naming every offending field. */
export function parseParams<T>(schema: z.ZodType<T>, params: unknown): T {
  const result = schema.safeParse(params ?? {});
  if (result.success) return result.data;
  const violations: FieldViolation[] = result.error.issues.map((issue) => ({
    field: formatPath(issue.path),
    description: issue.message,
  }));
  throw invalidParams(violations);
}

export function successResponse(id: JsonRpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** The JSON-RPC error envelope of `error` (no stack, no internal text: A2AError messages are safe). */
export function errorEnvelope(id: JsonRpcId, error: A2AError) {
  const data = errorDetails(error);
  return { jsonrpc: '2.0', id, error: { code: error.code, message: error.message, ...(data ? { data } : {}) } } as const;
}

export function errorResponse(id: JsonRpcId, error: A2AError): string {
  return JSON.stringify(errorEnvelope(id, error));
}
