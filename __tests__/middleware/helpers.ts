/** Test helpers for the middleware suites: both Express majors, an ephemeral server, raw requests, tokens. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ErrorRequestHandler, Express, Request, Response } from 'express';
import * as rTracer from 'cls-rtracer';
import { SignJWT, type JWTPayload } from 'jose';
import { readA2AState } from '../../lib/context/request-state';

type ExpressFactory = typeof import('express');

/**
 * `describe.each(EXPRESS_VERSIONS)('… on %s', (_name, express) => …)`. jest.config.js runs every
 * suite in an express5 and an express4 project ('express' is mapped to express4 there, for the
 * library too), so each project lists the one major it runs and the pair covers both.
 */
const current = require('express') as ExpressFactory;
export const EXPRESS_VERSIONS: Array<[string, ExpressFactory]> = [
  [current === (require('express4') as ExpressFactory) ? 'express 4' : 'express 5', current],
];

/** A fetch response body as JSON (untyped, for assertions). */
export async function body(res: globalThis.Response | Promise<globalThis.Response>): Promise<any> {
  return (await res).json();
}

export interface Running {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Listens on an ephemeral loopback port. */
export async function start(app: Express | http.RequestListener): Promise<Running> {
  const server = http.createServer(app as http.RequestListener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** Terminal handler: echoes what the middlewares contributed, plus cls-rtracer's id. */
export function echoState(req: Request, res: Response): void {
  res.json({ state: readA2AState(req) ?? null, rtracerId: rTracer.id() ?? null });
}

/** Collects errors that reached the app's own error handler (misuse, wiring, foreign errors). */
export function recordingErrorHandler(seen: unknown[]): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    seen.push(err);
    res.status(500).json({ appHandler: true, message: (err as Error).message });
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json(): any;
}

/** A request through node:http, for headers fetch will not send (Host) or chunked bodies. */
export function rawRequest(
  port: number,
  options: { method?: string; path?: string; headers?: http.OutgoingHttpHeaders; body?: string | Buffer[] },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path ?? '/', headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
      },
    );
    req.on('error', reject);
    if (Array.isArray(options.body)) {
      for (const chunk of options.body) req.write(chunk);
    } else if (options.body !== undefined) {
      req.write(options.body);
    }
    req.end();
  });
}

export const HS_SECRET = new TextEncoder().encode('a-test-secret-that-is-at-least-32-bytes-long!');

/** Signs an HS256 token with HS_SECRET (or the given key/alg), valid for 5 minutes unless `expiresIn` says otherwise (null: no `exp`). */
export async function signToken(
  claims: JWTPayload,
  options: {
    key?: Parameters<SignJWT['sign']>[0];
    alg?: string;
    kid?: string;
    expiresIn?: string | number | null;
    issuer?: string;
    audience?: string;
  } = {},
): Promise<string> {
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: options.alg ?? 'HS256', ...(options.kid ? { kid: options.kid } : {}) }).setIssuedAt();
  const expiresIn = options.expiresIn === undefined ? '5m' : options.expiresIn;
  if (expiresIn !== null) jwt = jwt.setExpirationTime(expiresIn);
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  if (options.audience) jwt = jwt.setAudience(options.audience);
  return jwt.sign(options.key ?? HS_SECRET);
}

/** A JSON-RPC request body. */
export function rpc(id: string | number | null, method = 'SendMessage', params: unknown = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}
