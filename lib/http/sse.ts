/**
 * The one SSE writer: headers, `data:` framing, comment heartbeats, the final error frame, a
 * bounded send buffer and clean-up on close. The stream opens lazily, so an error found before the
 * first event can still be answered as a plain JSON response.
 */
import type { Response } from 'express';

/**
 * One timer for all the open streams of a route instead of one per stream: an idle stream costs a
 * set entry, not an interval. It runs only while some stream is open.
 */
export class Heartbeat {
  readonly #intervalMs: number;
  readonly #writers = new Set<SseWriter>();
  #timer: NodeJS.Timeout | undefined;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  add(writer: SseWriter): void {
    if (this.#intervalMs <= 0) return;
    this.#writers.add(writer);
    if (!this.#timer) {
      this.#timer = setInterval(() => {
        for (const w of this.#writers) w.ping();
      }, this.#intervalMs);
      this.#timer.unref();
    }
  }

  delete(writer: SseWriter): void {
    if (!this.#writers.delete(writer) || this.#writers.size > 0) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

export interface SseLimits {
  readonly heartbeat: Heartbeat;
  /**
   * Bytes a stream may have waiting for its client. A client further behind than this for longer
   * than `stallMs` (or at any time by 16 times as much) is cut: its connection is closed. The task
   * is not affected; the client can SubscribeToTask again. A burst or one large event does not cut
   * a client that keeps reading.
   */
  readonly maxBufferedBytes: number;
  readonly stallMs: number;
  /** Told once when a stream is cut for falling behind. */
  readonly onOverflow?: () => void;
}

const PING = ': ping\n\n';
/** How far beyond maxBufferedBytes a client may be at any moment, stalled or not. */
const HARD_LIMIT_FACTOR = 16;

export class SseWriter {
  readonly #res: Response;
  readonly #limits: SseLimits;
  #opened = false;
  #closed = false;
  /** Set while the client is more than maxBufferedBytes behind: cuts it unless it drains first. */
  #stall: NodeJS.Timeout | undefined;

  constructor(res: Response, limits: SseLimits) {
    this.#res = res;
    this.#limits = limits;
  }

  get opened(): boolean {
    return this.#opened;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Writes one event (a JSON text on one line). `id`: the store version the event's write made, the
   * SSE event id a client resumes after (`Last-Event-ID` on SubscribeToTask).
   */
  send(json: string, id?: number): void {
    this.#write(id === undefined ? `data: ${json}\n\n` : `id: ${id}\ndata: ${json}\n\n`);
  }

  /** Writes a final `event: error` frame. */
  sendError(json: string): void {
    this.#write(`event: error\ndata: ${json}\n\n`);
  }

  /** Sends the response headers now, before any event (a resumed stream with nothing missed). */
  begin(): void {
    if (!this.#closed) this.#open();
  }

  /** A heartbeat comment, if the stream is still open. */
  ping(): void {
    if (this.#opened) this.#write(PING);
  }

  /** Ends the stream (idempotent). A stall watch stays: a client that never reads the end is still cut. */
  end(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#limits.heartbeat.delete(this);
    this.#res.end();
  }

  /** Forgets the stream without writing (the client went away). */
  stop(): void {
    this.#closed = true;
    clearTimeout(this.#stall);
    this.#limits.heartbeat.delete(this);
  }

  #write(frame: string): void {
    if (this.#closed) return;
    this.#open();
    const res = this.#res;
    res.write(frame);
    // write() buffers whatever the client has not taken yet: a client that stops reading must not
    // make the server hold the whole stream.
    const behind = res.writableLength;
    const { maxBufferedBytes, stallMs } = this.#limits;
    if (behind <= maxBufferedBytes) return;
    if (behind > maxBufferedBytes * HARD_LIMIT_FACTOR) return this.#cut();
    if (this.#stall) return;
    this.#stall = setTimeout(() => this.#stalled(), stallMs);
    this.#stall.unref();
  }

  /** The stall period is over: a client that has not caught up meanwhile is cut. */
  #stalled(): void {
    this.#stall = undefined;
    const res = this.#res;
    if (res.destroyed || res.writableFinished || res.writableLength <= this.#limits.maxBufferedBytes) return;
    this.#cut();
  }

  /**
   * Cuts a stream whose client fell behind: what it has not read is stale by now, and holding it is
   * the cost being bounded, so the connection is closed at once (the client can subscribe again).
   */
  #cut(): void {
    if (this.#res.destroyed) return;
    this.stop();
    this.#limits.onOverflow?.();
    this.#res.destroy();
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
    this.#limits.heartbeat.add(this);
  }
}
