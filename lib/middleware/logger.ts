/**
 * withRequestContext(logger): a Logger that adds the current request's id and trace ids to every line, so everything logged while handling a message
 * can be correlated with its HTTP request.
 */
import * as rTracer from 'cls-rtracer';
import { tryGetA2ARequestContext } from '../context/carrier.js';
import type { Logger } from '../options.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

function correlation(): Record<string, string> | undefined {
  const carrier = tryGetA2ARequestContext();
  const requestId = carrier?.requestId ?? rTracer.id();
  const fields: Record<string, string> = {};
  if (typeof requestId === 'string') fields.requestId = requestId;
  if (carrier?.trace) {
    fields.traceId = carrier.trace.traceId;
    fields.spanId = carrier.trace.spanId;
  }
  return Object.keys(fields).length > 0 ? fields : undefined;
}

/**
 * Wraps a pino-compatible logger: inside a request (the A2A carrier, or a2aTracing's cls-rtracer scope) each line gets `requestId` (and
 * `traceId`/`spanId` when known); fields the caller passes win. Outside a request lines pass through unchanged.
 */
export function withRequestContext(logger: Logger): Logger {
  const wrapped = {} as Logger;
  for (const level of LEVELS) {
    wrapped[level] = (obj: object | string, msg?: string) => {
      const fields = correlation();
      // Keep the caller's arity: pino formats extra arguments.
      const write = (first: object | string, second?: string) => (second === undefined ? logger[level](first) : logger[level](first, second));
      if (!fields) return write(obj, msg);
      if (typeof obj === 'string') return write(fields, obj);
      // An Error's fields are not enumerable: hand it over as pino's conventional `err`.
      return write(obj instanceof Error ? { ...fields, err: obj } : { ...fields, ...obj }, msg);
    };
  }
  return wrapped;
}
