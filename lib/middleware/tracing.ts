/** a2aTracing: the request id (validated `X-Request-Id`, echoed, cls-rtracer's), W3C trace context, and OpenTelemetry's context kept through body parsing. */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import * as rTracer from 'cls-rtracer';
import { z } from 'zod';
import { type A2ATraceContext } from '../context/carrier.js';
import { contributeA2AState, writableA2AState, type A2ARequestState } from '../context/request-state.js';
import { A2AMiddlewareError, A2AWiringError, reportMiddlewareError, type A2AErrorMode } from './errors.js';
import { detectUncalledFactory } from './misuse.js';
import { canWriteHeadersDirectly, setValidHeader } from '../internals/node-out-headers.js';
import { fn, parseOptions } from '../options.js';
import { brandMiddleware, type A2AMiddleware } from './types.js';

/** The part of `@opentelemetry/api` a2aTracing uses (so the package stays an optional peer). */
export interface OpenTelemetryApiLike {
  readonly context: {
    active(): unknown;
    with<T>(context: never, fn: () => T): T;
  };
  readonly propagation: {
    extract(context: never, carrier: Record<string, unknown>): unknown;
  };
  readonly trace: {
    getSpanContext(context: never): { traceId: string; spanId: string; traceFlags: number; traceState?: { serialize(): string } } | undefined;
  };
  /** The empty context (`@opentelemetry/api` exports it): no span in it, nothing to look up. */
  readonly ROOT_CONTEXT?: unknown;
}

export interface A2ATracingOptions {
  /** Header carrying the request id (default 'X-Request-Id'). */
  readonly requestIdHeader?: string;
  /** Echo the request id in the response under the same header (default true). */
  readonly echoHeader?: boolean;
  /** Longest incoming request id honoured (default 128, at most 1024). */
  readonly maxRequestIdLength?: number;
  /**
   * An incoming id that is too long or has characters outside [A-Za-z0-9._:-]: 'replace' (default) answers normally under a fresh id (a tracing
   * header should not fail a request; the bad value is never echoed or logged), 'reject' answers 400 A2A_INVALID_REQUEST_ID.
   */
  readonly invalidRequestId?: 'replace' | 'reject';
  /** Honour incoming request ids at all (default true; false when clients are untrusted). */
  readonly trustIncomingRequestId?: boolean;
  /** Makes fresh ids (default crypto.randomUUID); they must be 1-1024 characters of [A-Za-z0-9._:-]. */
  readonly generateRequestId?: () => string;
  /** Parse `traceparent`/`tracestate` (default true). */
  readonly traceContext?: boolean;
  /** 'auto' (default) loads `@opentelemetry/api` if installed; pass the module itself (e.g. from an ESM app) or false to disable. */
  readonly opentelemetry?: 'auto' | false | OpenTelemetryApiLike;
  /** 'respond' (default) writes 400 itself; 'next' passes the error to an A2A-aware error handler. */
  readonly errors?: A2AErrorMode;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]+$/;
const MAX_GENERATED_ID_LENGTH = 1024;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const TRACESTATE_KEY = /^(?:[a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$/;
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const MAX_TRACESTATE_MEMBERS = 32;
const MAX_TRACESTATE_LENGTH = 512;

/** A `tracestate` normalised (members joined by ','), or undefined when malformed (the spec lets us drop it whole). */
export function parseTracestate(value: string | undefined): string | undefined {
  if (value === undefined || value.length > MAX_TRACESTATE_LENGTH) return undefined;
  const members = value
    .split(',')
    .map((member) => member.trim())
    .filter((member) => member !== '');
  if (members.length === 0 || members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  const keys = new Set<string>();
  for (const member of members) {
    const equals = member.indexOf('=');
    if (equals <= 0) return undefined;
    const key = member.slice(0, equals);
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(member.slice(equals + 1)) || keys.has(key)) return undefined;
    keys.add(key);
  }
  return members.join(',');
}

/**
 * Parses `traceparent` (version 00, or a higher version read by its 00 prefix as the spec asks); undefined for anything malformed, an all-zero trace
 * or span id, or version ff. `tracestate` is only kept next to a valid `traceparent`.
 */
export function parseTraceparent(traceparent: string | undefined, tracestate?: string): A2ATraceContext | undefined {
  if (traceparent === undefined) return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  const traceState = parseTracestate(tracestate);
  return { traceId, spanId, flags: Number.parseInt(flags, 16), ...(traceState === undefined ? {} : { traceState }) };
}

interface OtelSlot {
  api: OpenTelemetryApiLike | null | undefined; // undefined while loading
  ready: Promise<void>;
}

let autoOtel: OtelSlot | undefined;

function isOtelApi(value: unknown): value is OpenTelemetryApiLike {
  const api = value as Partial<OpenTelemetryApiLike> | null;
  return (
    api !== null &&
    typeof api === 'object' &&
    typeof api.context?.active === 'function' &&
    typeof api.context?.with === 'function' &&
    typeof api.propagation?.extract === 'function' &&
    typeof api.trace?.getSpanContext === 'function'
  );
}

/** Loads `@opentelemetry/api` once, if resolvable; a non-literal specifier keeps bundlers out. */
function autoOpenTelemetry(): OtelSlot {
  if (autoOtel) return autoOtel;
  const specifier = '@opentelemetry/api';
  const slot: OtelSlot = { api: undefined, ready: Promise.resolve() };
  slot.ready = import(specifier).then(
    (module: unknown) => {
      const candidate = isOtelApi(module) ? module : (module as { default?: unknown } | null)?.default;
      slot.api = isOtelApi(candidate) ? candidate : null;
    },
    () => {
      slot.api = null;
    },
  );
  autoOtel = slot;
  return slot;
}

const optionsSchema = z.strictObject({
  requestIdHeader: z.string().regex(HEADER_NAME, { error: 'must be an HTTP header name' }).default('X-Request-Id'),
  echoHeader: z.boolean().default(true),
  maxRequestIdLength: z.number().int().min(1).max(1024).default(128),
  invalidRequestId: z.enum(['replace', 'reject']).default('replace'),
  trustIncomingRequestId: z.boolean().default(true),
  generateRequestId: fn<() => string>('a function () => string').optional(),
  traceContext: z.boolean().default(true),
  opentelemetry: z
    .custom<'auto' | false | OpenTelemetryApiLike>((value) => value === 'auto' || value === false || isOtelApi(value), {
      error: "must be 'auto', false, or the @opentelemetry/api module",
    })
    .default('auto'),
  errors: z.enum(['respond', 'next']).default('respond'),
});

/**
 * The request id of an answer the kit writes before a2aTracing ran (the app's auth in front of it): a2aTracing's default rules, the client's valid
 * `X-Request-Id` or a fresh one, echoed.
 */
export function ensureRequestId(req: IncomingMessage, res: ServerResponse): string {
  const state = writableA2AState(req);
  if (state.requestId !== undefined) return state.requestId; // a2aTracing ran, and echoed it as configured
  const incoming = single(req.headers['x-request-id']);
  state.requestId = incoming !== undefined && incoming.length <= 128 && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', state.requestId);
  return state.requestId;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

type TracingSettings = z.output<typeof optionsSchema>;

interface RequestIdSettings {
  readonly headerName: string;
  readonly headerKey: string;
  readonly echoHeader: boolean;
}

/** Enters the request's scopes (OpenTelemetry's when present, then cls-rtracer's) and echoes the id; built once per middleware. */
type EnterScopes = (req: Request, res: Response, next: NextFunction, requestId: string, state: A2ARequestState) => void;

/** Where OpenTelemetry comes from: loaded once ('auto'), given, or none. */
function otelSlotOf(option: TracingSettings['opentelemetry']): OtelSlot {
  return option === 'auto' ? autoOpenTelemetry() : { api: option === false ? null : option, ready: Promise.resolve() };
}

function freshIdMaker(generateRequestId: (() => string) | undefined): () => string {
  const generate = generateRequestId ?? randomUUID;
  // crypto.randomUUID's ids (36 characters of [0-9a-f-]) need no check; only a custom generator's do.
  const checkGenerated = generateRequestId !== undefined;
  // Our own ids only need to be header-safe; maxRequestIdLength bounds what clients may send.
  const isValidGeneratedId = (id: string) => id.length <= MAX_GENERATED_ID_LENGTH && REQUEST_ID.test(id);
  return function freshId(): string {
    const id = generate();
    if (checkGenerated && (typeof id !== 'string' || !isValidGeneratedId(id))) {
      throw new A2AWiringError(
        'A2A_MIDDLEWARE_MISUSE',
        `a2aTracing: generateRequestId returned an id that is not 1-${MAX_GENERATED_ID_LENGTH} characters of [A-Za-z0-9._:-]`,
      );
    }
    return id;
  };
}

/** The scope entry for one middleware: OpenTelemetry's context (active or extracted), then the id's. */
function scopeEnterer(otel: OtelSlot, traceContext: boolean, ids: RequestIdSettings): EnterScopes {
  const { headerName, headerKey, echoHeader } = ids;
  // cls-rtracer holds the id (rTracer.id() works in execute(), stores, loggers). runWithId rather than its express middleware: the middleware
  // re-wraps five emitter methods on req and res per request, which the kit does not need (raw-body binds the body parser's callback itself).
  if (echoHeader) canWriteHeadersDirectly(); // looks up where Node keeps headers, once
  const tracer = (_req: Request, res: Response, next: NextFunction, requestId: string): void => {
    // A valid header name (checked above) and value (an id passes REQUEST_ID or is ours).
    if (echoHeader) setValidHeader(res, headerKey, headerName, requestId);
    rTracer.runWithId(next, requestId);
  };

  return function enterScopes(req: Request, res: Response, next: NextFunction, requestId: string, state: A2ARequestState): void {
    const api = otel.api;
    if (!api) {
      tracer(req, res, next, requestId);
      return;
    }
    const current = api.context.active();
    let context = current;
    // The empty context holds no span: skip the lookup (one call through OpenTelemetry's global registry per request).
    const active = current === api.ROOT_CONTEXT ? undefined : api.trace.getSpanContext(current as never);
    if (!active && traceContext && req.headers.traceparent !== undefined) {
      context = api.propagation.extract(current as never, req.headers as Record<string, unknown>);
    }
    if (state.trace === undefined) {
      // Unchanged context: its span context is `active` (undefined here), no need to ask again.
      const spanContext = active ?? (context === current ? undefined : api.trace.getSpanContext(context as never));
      if (spanContext && !/^0+$/.test(spanContext.traceId)) {
        const traceState = spanContext.traceState?.serialize();
        contributeA2AState(req, {
          trace: { traceId: spanContext.traceId, spanId: spanContext.spanId, flags: spanContext.traceFlags, ...(traceState ? { traceState } : {}) },
        });
      }
    }
    // cls-rtracer's scope opens inside this one; with nothing extracted, with() would only re-enter the current context, so skip it.
    if (context === current) tracer(req, res, next, requestId);
    else api.context.with(context as never, () => tracer(req, res, next, requestId));
  };
}

/**
 * a2aTracing(options): opens the request scope. Contributes `requestId` and `trace` to the A2A state, runs the rest of the request inside
 * cls-rtracer's id scope (so `rTracer.id()` works in execute()), and, with OpenTelemetry present, inside the request's OTel context: the active one
 * (e.g. the HTTP instrumentation's server span) or, when none, one extracted from the headers by the registered propagator. Both scopes survive body
 * parsing because cls-rtracer binds the request's and response's event listeners to the scope it opens inside ours.
 */
export function a2aTracing(options: A2ATracingOptions = {}): A2AMiddleware {
  // eslint-disable-next-line prefer-rest-params -- how the factory was called (app.use(a2aX) vs a2aX()), not its parameters
  const misused = detectUncalledFactory('a2aTracing', 'a2aTracing()', arguments);
  if (misused) return misused;

  const parsed = parseOptions('a2aTracing', optionsSchema, options);
  const headerName = parsed.requestIdHeader;
  const headerKey = headerName.toLowerCase();
  const { echoHeader, maxRequestIdLength, invalidRequestId, trustIncomingRequestId, traceContext, errors: mode } = parsed;
  const freshId = freshIdMaker(parsed.generateRequestId);
  const otel = otelSlotOf(parsed.opentelemetry);
  const isValidId = (id: string) => id.length <= maxRequestIdLength && REQUEST_ID.test(id);
  const enterScopes = scopeEnterer(otel, traceContext, { headerName, headerKey, echoHeader });

  return brandMiddleware(function a2aTracing(req: Request, res: Response, next: NextFunction): void {
    let requestId: string;
    let rejected: A2AMiddlewareError | undefined;
    const headers = req.headers;
    try {
      const incoming = trustIncomingRequestId ? single(headers[headerKey]) : undefined;
      if (incoming !== undefined && incoming !== '' && isValidId(incoming)) {
        requestId = incoming;
      } else {
        requestId = freshId();
        if (incoming !== undefined && incoming !== '' && invalidRequestId === 'reject') {
          rejected = new A2AMiddlewareError(
            'A2A_INVALID_REQUEST_ID',
            `The ${headerName} header must be 1-${maxRequestIdLength} characters of [A-Za-z0-9._:-]`,
          );
        }
      }
    } catch (err) {
      next(err);
      return;
    }

    const traceparent = traceContext ? headers.traceparent : undefined;
    const trace = traceparent === undefined ? undefined : parseTraceparent(single(traceparent), single(headers.tracestate));
    // contributeA2AState(req, { requestId, trace? }) without the patch object.
    const state = writableA2AState(req);
    state.requestId = requestId;
    if (trace) state.trace = trace;
    if (rejected) {
      if (echoHeader) res.setHeader(headerName, requestId);
      reportMiddlewareError(rejected, req, res, next, mode);
      return;
    }
    if (otel.api !== undefined) {
      enterScopes(req, res, next, requestId, state);
    } else {
      // Only the first requests after start-up wait for the optional import to settle.
      otel.ready.then(() => enterScopes(req, res, next, requestId, state), next);
    }
  }, 'tracing');
}
