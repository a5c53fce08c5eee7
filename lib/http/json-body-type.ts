/**
 * Why a JSON-RPC body was not read: a body not declared JSON (`curl -d` sends
 * application/x-www-form-urlencoded) is left unread by the router's parser, so the envelope
 * problem found after it is only a symptom; this names the Content-Type instead.
 */
import type { IncomingMessage } from 'node:http';
import { EnvelopeError } from '../protocol/jsonrpc.js';

/** The media types the router's body parser reads as JSON (lib/express/dispatcher.ts). */
const isJsonType = (type: string): boolean => type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));

const hasBody = (req: IncomingMessage): boolean => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';

/**
 * InvalidRequest naming the Content-Type when the request has a body that is not declared JSON:
 * -32600 as before, since the request is not a JSON-RPC request object (A2A's
 * ContentTypeNotSupported is for a part's media type); undefined for a JSON body.
 */
export function notJsonBody(req: IncomingMessage): EnvelopeError | undefined {
  const header = req.headers['content-type'];
  const type = header?.split(';', 1)[0].trim().toLowerCase();
  if (type !== undefined ? isJsonType(type) : !hasBody(req)) return undefined;
  const got = header ? `Content-Type ${header}` : 'a body without a Content-Type';
  return new EnvelopeError(null, `${got} is not read as JSON: send the JSON-RPC 2.0 request object with Content-Type application/json`);
}
