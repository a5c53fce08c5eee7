/**
 * The body size limit, shared by a2aSecurity and the router: a declared `Content-Length`, or the size of a body the host app already parsed; and a
 * 413 the client can read although its body is unread.
 */
import type { Request, Response } from 'express';

/** Whether the host already parsed the body, so no parser of ours sees it: Express 4's body-parser sets `_body`; Express 5's skips an ended stream. */
function bodyAlreadyRead(req: Request): boolean {
  return req.body !== undefined && ((req as { _body?: unknown })._body === true || (req.complete && req.readableEnded));
}

/** Bytes `value` takes as JSON, counted until it passes `limit` (then any number above it). */
export function jsonSizeAbove(value: unknown, limit: number): boolean {
  // Iterative, so a deeply nested body cannot overflow the stack; stops as soon as it is too large.
  const pending: unknown[] = [value];
  let size = 0;
  while (pending.length > 0) {
    const item = pending.pop();
    switch (typeof item) {
      case 'string':
        size += Buffer.byteLength(item) + 2;
        break;
      case 'number':
      case 'boolean':
        size += String(item).length;
        break;
      case 'object':
        if (item === null) {
          size += 4;
        } else if (ArrayBuffer.isView(item)) {
          size += item.byteLength; // express.raw()'s Buffer: its bytes, not its indices
        } else if (Array.isArray(item)) {
          size += 1 + Math.max(item.length, 1);
          for (let i = 0; i < item.length; i++) pending.push(item[i]);
        } else {
          const keys = Object.keys(item);
          size += 1 + Math.max(keys.length, 1);
          for (const key of keys) {
            size += Buffer.byteLength(key) + 3;
            pending.push((item as Record<string, unknown>)[key]);
          }
        }
        break;
      default:
        break; // undefined and functions are not serialised
    }
    if (size > limit) return true;
  }
  return false;
}

const MEASURED = Symbol('a2a-express-kit.body-measured');
type WithMeasure = { [MEASURED]?: number };

/**
 * Whether the body is over `limit` bytes, as far as can be known before reading it: a declared `Content-Length`, or, for a body the host already
 * parsed (e.g. chunked, through a larger `express.json({ limit })`), its raw length when the app kept it (`req.rawBody`), else its size as JSON. A
 * body still unread and undeclared is left to the parser, which counts the bytes.
 */
export function bodyOverLimit(req: Request, limit: number): boolean {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return true;
  if (!bodyAlreadyRead(req)) return false;
  // Measured once per request and limit: a2aSecurity and the router may both ask.
  if ((req as WithMeasure)[MEASURED] === limit) return false;
  const raw = (req as { rawBody?: unknown }).rawBody;
  const over = Buffer.isBuffer(raw) || typeof raw === 'string' ? Buffer.byteLength(raw) > limit : jsonSizeAbove(req.body, limit);
  if (!over) (req as WithMeasure)[MEASURED] = limit;
  return over;
}

/** How much of an unread body is read and thrown away so that the client can read the 413. */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
const DRAIN_MAX_MS = 10_000;

/**
 * Prepares `res` for an answer sent before the request body was read (a 413): `Connection: close`, and the connection stays open, discarding what the
 * client still sends, until the request ends (at most DRAIN_MAX_BYTES or DRAIN_MAX_MS). Closing a socket with unread data makes TCP reset it, and a
 * reset makes the client lose the answer it already received. The answer itself goes out at once: `res.end()` writes it and only the end of the
 * exchange waits for the drain.
 */
export function answerBeforeBody(req: Request, res: Response): void {
  // A body already read (by the host's parser) leaves the connection reusable.
  if (req.readableEnded || req.destroyed) return;
  res.setHeader('Connection', 'close');

  let drained = 0;
  let done = false;
  let finishResponse: (() => void) | undefined;
  const timer = setTimeout(() => settle(), DRAIN_MAX_MS);
  timer.unref?.();
  const count = (chunk: Buffer): void => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) settle();
  };
  function settle(): void {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.off('data', count);
    req.off('end', settle);
    req.off('close', settle);
    res.end = end;
    finishResponse?.();
  }
  req.on('data', count);
  req.once('end', settle);
  req.once('close', settle);
  req.resume();

  const end = res.end;
  res.end = function endAfterDrain(this: Response, ...args: unknown[]): Response {
    if (done) return (end as (...a: unknown[]) => Response).apply(this, args);
    const callback = typeof args[args.length - 1] === 'function' ? (args.pop() as () => void) : undefined;
    const [chunk, encoding] = args as [unknown, BufferEncoding | undefined];
    if (chunk !== undefined && chunk !== null) this.write(chunk as string, encoding ?? 'utf8');
    finishResponse = () => {
      (end as (callback?: () => void) => Response).call(this, callback);
    };
    return this;
  } as Response['end'];
}
