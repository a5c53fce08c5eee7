/**
 * The one SSE writer: headers, `data:` framing, comment heartbeats, the final error frame and
 * clean-up on close. The stream opens lazily, so an error found before the first event can still
 * be answered as a plain JSON response.
 */
import type { Response } from 'express';

export class SseWriter {
  readonly #res: Response;
  readonly #heartbeatMs: number;
  #timer: NodeJS.Timeout | undefined;
  #opened = false;
  #closed = false;

  constructor(res: Response, heartbeatMs: number) {
    this.#res = res;
    this.#heartbeatMs = heartbeatMs;
  }

  get opened(): boolean {
    return this.#opened;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes one event (a JSON text on one line). */
  send(json: string): void {
    if (this.#closed) return;
    this.#open();
    this.#res.write(`data: ${json}\n\n`);
  }

  /** Writes a final `event: error` frame. */
  sendError(json: string): void {
    if (this.#closed) return;
    this.#open();
    this.#res.write(`event: error\ndata: ${json}\n\n`);
  }

  /** Ends the stream (idempotent). */
  end(): void {
    if (this.#closed) return;
    this.stop();
    this.#res.end();
  }

  /** Forgets the stream without writing (the client went away). */
  stop(): void {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #open(): void {
    if (this.#opened) return;
    this.#opened = true;
    const res = this.#res;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    if (this.#heartbeatMs > 0) {
      this.#timer = setInterval(() => {
        if (!this.#closed) res.write(': ping\n\n');
      }, this.#heartbeatMs);
      this.#timer.unref();
    }
  }
}
