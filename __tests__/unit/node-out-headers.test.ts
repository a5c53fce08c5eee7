/**
 * Probe of the Node internal lib/internals/node-out-headers.ts writes into (`kOutHeaders`): a Node
 * release that keeps response headers differently fails here by name and version, where the kit
 * itself would quietly fall back to setHeader and lose the fast path.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Response } from 'express';
import { canWriteHeadersDirectly, nodeOutHeadersDrift, outHeaders, setValidHeader } from '../../lib/internals/node-out-headers';

/** Throws naming the module and the Node release when a relied-on internal no longer holds. */
function probe(what: string, holds: boolean): void {
  if (!holds) {
    throw new Error(
      `lib/internals/node-out-headers.ts relies on "${what}", which no longer holds on Node ${process.version}: ` +
        'a private part of OutgoingMessage changed; update the module for this release (a2aSecurity and a2aTracing fall back to setHeader meanwhile).',
    );
  }
}

interface Answer {
  readonly rawHeaders: string[];
  readonly seen: Record<string, unknown>;
}

/** Serves one request with `handle` on a loopback port; the raw response headers and what the handler saw. */
async function serveOnce(handle: (res: http.ServerResponse, seen: Record<string, unknown>) => void): Promise<Answer> {
  const seen: Record<string, unknown> = {};
  const server = http.createServer((_req, res) => {
    try {
      handle(res, seen);
    } catch (err) {
      seen.error = err; // answered all the same: the probes below say what broke
    }
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const rawHeaders = await new Promise<string[]>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.rawHeaders));
        })
        .on('error', reject);
    });
    return { rawHeaders, seen };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const pairs = (raw: readonly string[]): Array<[string, string]> =>
  Array.from({ length: raw.length / 2 }, (_, i) => [raw[2 * i], raw[2 * i + 1]] as [string, string]);

describe(`Node ${process.version}'s response headers (kOutHeaders)`, () => {
  it("keeps them as the module's start-up probe expects", () => {
    const drift = nodeOutHeadersDrift();
    probe(`setHeader keeps [name, value] under the lower-cased name in kOutHeaders${drift ? ` (found: ${drift})` : ''}`, drift === undefined);
    probe('canWriteHeadersDirectly() is true', canWriteHeadersDirectly());
  });

  it('sends headers written directly, next to and after ones setHeader wrote, with their names as given', async () => {
    const { rawHeaders, seen } = await serveOnce((res, seen) => {
      res.setHeader('X-Powered-By', 'probe');
      const headers = outHeaders(res as unknown as Response);
      seen.direct = headers !== undefined;
      if (headers) headers['content-security-policy'] = ['Content-Security-Policy', "default-src 'none'"];
      setValidHeader(res as unknown as Response, 'x-request-id', 'X-Request-Id', 'id-1');
      res.removeHeader('X-Powered-By');
      seen.get = res.getHeader('x-request-id');
      seen.has = res.hasHeader('Content-Security-Policy');
      seen.names = res.getHeaderNames();
    });
    probe('outHeaders(res) returns the object setHeader writes into', seen.direct === true);
    probe('getHeader and hasHeader see headers written directly', seen.get === 'id-1' && seen.has === true);
    probe('getHeaderNames lists them', JSON.stringify(seen.names) === JSON.stringify(['content-security-policy', 'x-request-id']));
    const sent = pairs(rawHeaders);
    probe(
      'the header block carries them with their names as given',
      sent.some(([name, value]) => name === 'Content-Security-Policy' && value === "default-src 'none'") &&
        sent.some(([name, value]) => name === 'X-Request-Id' && value === 'id-1'),
    );
    probe('removeHeader removes a header setHeader wrote next to direct ones', !sent.some(([name]) => name.toLowerCase() === 'x-powered-by'));
  });

  it('creates the headers object as setHeader would on a response that has none yet', async () => {
    const { rawHeaders, seen } = await serveOnce((res, seen) => {
      setValidHeader(res as unknown as Response, 'x-request-id', 'X-Request-Id', 'id-2');
      res.setHeader('Content-Type', 'text/plain');
      seen.type = res.getHeader('content-type');
    });
    probe('setHeader keeps working after a direct write created the object', seen.type === 'text/plain');
    const sent = pairs(rawHeaders);
    probe(
      'a first header written directly is sent',
      sent.some(([name, value]) => name === 'X-Request-Id' && value === 'id-2'),
    );
    probe(
      'a header setHeader wrote after it is sent too',
      sent.some(([name, value]) => name === 'Content-Type' && value === 'text/plain'),
    );
  });

  it('leaves a response whose headers are sent to setHeader (which throws then)', async () => {
    const { seen } = await serveOnce((res, seen) => {
      res.writeHead(200);
      seen.after = outHeaders(res as unknown as Response);
    });
    expect(seen.after).toBeUndefined();
  });
});
