/**
 * Private reach: a net.Socket's `_handle.writeQueueSize`, the bytes its libuv handle holds that the
 * kernel has not taken, and `_bytesDispatched`, all it was handed. The SSE writer tells a stalled
 * client (reads nothing) from a slow one with them.
 */
import type { Socket } from 'node:net';

// Node's own net.Socket reads the same field (bufferSize, and its write bookkeeping); there is no
// public API for it. __tests__/unit/socket-write-queue.test.ts fails naming this file and the Node
// version when a release changes it; meanwhile the SSE writer falls back to its stall timer.

/** The part of a net.Socket this module reads. */
interface SocketInternals {
  readonly _handle?: { readonly writeQueueSize?: number } | null;
  /** Bytes handed to the handle so far (what it has not sent yet included). */
  readonly _bytesDispatched?: number;
}

/**
 * The bytes the socket of `owner` (an http.ServerResponse, an Express Response) holds that the
 * kernel has not taken; undefined when not known (no socket, closed, or another Node's layout).
 */
export function unsentInHandle(owner: { readonly socket: Socket | null }): number | undefined {
  return (owner.socket as SocketInternals | null)?._handle?.writeQueueSize;
}

/**
 * The bytes the kernel has taken from the socket of `owner` so far: only grows while its client
 * reads (writeQueueSize alone may grow too, when the socket hands its handle the next batch).
 * Undefined when not known.
 */
export function sentByHandle(owner: { readonly socket: Socket | null }): number | undefined {
  const socket = owner.socket as SocketInternals | null;
  const unsent = socket?._handle?.writeQueueSize;
  const dispatched = socket?._bytesDispatched;
  return unsent === undefined || dispatched === undefined ? undefined : dispatched - unsent;
}
