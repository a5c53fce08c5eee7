/** Private reach: a net.Socket's libuv write queue, no public API; the SSE writer tells a stalled client from a slow one. */
// socket-write-queue.test.ts names a Node release that changes it; the SSE writer then falls back to its stall timer.
import type { Socket } from 'node:net';

interface SocketInternals {
  readonly _handle?: { readonly writeQueueSize?: number } | null;
  readonly _bytesDispatched?: number;
}

/** Bytes `owner`'s socket holds that the kernel has not taken; undefined when not known. */
export function unsentInHandle(owner: { readonly socket: Socket | null }): number | undefined {
  return (owner.socket as SocketInternals | null)?._handle?.writeQueueSize;
}

/** Bytes the kernel has taken from `owner`'s socket: grows only while its client reads (unlike writeQueueSize). */
export function sentByHandle(owner: { readonly socket: Socket | null }): number | undefined {
  const socket = owner.socket as SocketInternals | null;
  const unsent = socket?._handle?.writeQueueSize;
  const dispatched = socket?._bytesDispatched;
  return unsent === undefined || dispatched === undefined ? undefined : dispatched - unsent;
}
