/**
 * The one SSE writer: headers, `data:` framing, comment heartbeats, the final error frame, a bounded send buffer (the router-wide bound:
 * sse-budget.ts) and clean-up on close.
 */
import type { Response } from 'express';
import { sentByHandle, unsentInHandle } from '../internals/socket-write-queue.js';
import type { BudgetMember, StreamBufferBudget } from './sse-budget.js';

/** One timer for a route's open streams (an idle stream costs a set entry, not an interval); it runs only while a stream is open. */
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
   * Bytes a stream may have waiting for its client. A client further behind than this is cut: its connection is closed at once (the task is not
   * affected; the client resumes with Last-Event-ID and misses nothing). One event larger than this still goes through to a client that was caught
   * up, which then has `stallMs` to read it.
   */
  readonly maxBufferedBytes: number;
  readonly stallMs: number;
  /** The bound on the bytes waiting for the clients of all the streams that share it. */
  readonly budget: StreamBufferBudget;
  /** Told once when a stream is cut for falling behind: past its own bound, or the furthest behind when the total was. */
  readonly onOverflow?: (cause: 'stream' | 'total') => void;
}

const PING = ': ping\n\n';
/** Ends an event's `data:` line and the event. */
export const EVENT_END = '\n\n';
/** Room for the chunked-encoding framing written with an event (up to three chunks). */
const FRAMING_BYTES = 64;

/** Nothing observed yet: the stream went past its bound in the current turn of the event loop. */
const NOT_YET = -1;

/** The stream opens lazily, so an error found before the first event can still be answered as a plain JSON response. */
export class SseWriter implements BudgetMember {
  readonly #res: Response;
  readonly #limits: SseLimits;
  #opened = false;
  #closed = false;
  /** Bytes this stream is counted for in the budget (its buffer at its last write). */
  #counted = 0;
  /** What the client may have buffered: maxBufferedBytes, more while it reads one larger event. */
  #allowance: number;
  /**
   * Set while the client is past its allowance: what the kernel had taken from its socket when last seen (NOT_YET until the writes of the turn that
   * took it past were flushed). A client that took nothing since is not reading, and is cut.
   */
  #sentMark: number | undefined;
  /** Set while past the bound (or reading one larger event): cuts the client after stallMs unless it caught up (it may be written nothing more). */
  #stall: NodeJS.Timeout | undefined;

  constructor(res: Response, limits: SseLimits) {
    this.#res = res;
    this.#limits = limits;
    this.#allowance = limits.maxBufferedBytes;
  }

  get opened(): boolean {
    return this.#opened;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes one event (one-line JSON); `id` is the store version its write made, the SSE id a client resumes after (`Last-Event-ID`). */
  send(json: string, id?: number): void {
    this.#write(id === undefined ? `data: ${json}\n\n` : `id: ${id}\ndata: ${json}\n\n`);
  }

  /**
   * Writes one event whose JSON is `head` + `body` + `tail` (`end` is `tail` + EVENT_END): `body` is the event as every stream of the binding sends
   * it, encoded once and shared (as bytes, each socket references it instead of holding a copy); `head` and `tail` are this stream's own (the
   * JSON-RPC envelope with its request's id). `id` as in send().
   */
  sendShared(head: string, body: string | Buffer, end: string, id?: number): void {
    const start = id === undefined ? `data: ${head}` : `id: ${id}\ndata: ${head}`;
    if (typeof body === 'string') this.#write(start + body + end);
    else this.#write(start, body, end);
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

  /** Ends the stream (idempotent). Its buffer stays counted, and a stall watch stays, until the client reads it or leaves. */
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
    this.#limits.budget.leave(this, this.#counted);
    this.#counted = 0;
  }

  /** @internal The budget reads what is buffered now. */
  recount(): number {
    const res = this.#res;
    return (this.#counted = res.destroyed ? 0 : res.writableLength);
  }

  /** @internal The budget cuts the stream furthest behind. */
  cutOverBudget(): void {
    this.#cut('total');
  }

  #write(frame: string, body?: Buffer, end = ''): void {
    if (this.#closed) return;
    this.#open();
    const res = this.#res;
    const { maxBufferedBytes, budget } = this.#limits;
    const size = body === undefined ? frame.length : frame.length + body.length + end.length;
    // One event larger than the bound goes to a client that was within it, which has stallMs to read it.
    if (size > maxBufferedBytes && res.writableLength <= maxBufferedBytes) {
      this.#allowance = maxBufferedBytes + size + FRAMING_BYTES;
      this.#watchStall();
    }
    // Checked before the bytes are handed over (a write buffers what the client has not taken): all slow clients stay within the budget.
    budget.admit(this, size + FRAMING_BYTES);
    if (this.#closed) return;
    if (body === undefined) res.write(frame);
    else {
      // Three chunks (the socket sends them together): the shared bytes go out without a copy.
      res.write(frame);
      res.write(body);
      res.write(end);
    }
    // A client that stops reading must not make the server hold the stream.
    const behind = res.writableLength;
    if (behind > this.#allowance) {
      if (this.#behindAndNotReading()) return this.#cut('stream');
    } else if (behind <= maxBufferedBytes && (this.#sentMark !== undefined || this.#stall !== undefined || this.#allowance !== maxBufferedBytes)) {
      this.#caughtUp();
    }
    const counted = this.#counted;
    if (behind !== counted) {
      this.#counted = behind;
      budget.update(this, counted, behind);
    }
  }

  /**
   * Past the allowance: true when the client has taken nothing since it was last seen past it. The writes of one turn of the event loop are flushed
   * together at its end, so a client that was caught up is first judged once they were (a burst is not a slow reader; the budget bounds a burst for
   * all streams together). Without the socket's own count, the client has stallMs.
   */
  #behindAndNotReading(): boolean {
    const sent = this.#sentMark;
    if (sent === undefined) {
      this.#sentMark = NOT_YET;
      // Marked after this turn's writes were flushed, judged from the next turn on: the client has had a poll phase to take some.
      setImmediate(() => {
        const mark = sentByHandle(this.#res);
        if (mark !== undefined) setImmediate(() => this.#sentMark === NOT_YET && (this.#sentMark = mark));
      });
      this.#watchStall();
      return false;
    }
    if (sent === NOT_YET) return false;
    // What the kernel took since, not what the socket holds: that grows when the socket hands its handle the next batch, while the client reads.
    const now = sentByHandle(this.#res) ?? sent + 1;
    if (now <= sent && (unsentInHandle(this.#res) ?? 0) > 0) return true;
    this.#sentMark = now;
    return false;
  }

  /** Back within the bound: the usual allowance, no watch. */
  #caughtUp(): void {
    clearTimeout(this.#stall);
    this.#stall = undefined;
    this.#sentMark = undefined;
    this.#allowance = this.#limits.maxBufferedBytes;
  }

  /** Past the bound: the client has stallMs to be back within it, whether or not more is written. */
  #watchStall(): void {
    if (this.#stall) return;
    this.#stall = setTimeout(() => this.#stalled(), this.#limits.stallMs);
    this.#stall.unref();
  }

  /** stallMs past the bound: a client that has not caught up meanwhile is cut. */
  #stalled(): void {
    this.#stall = undefined;
    const res = this.#res;
    if (res.destroyed || res.writableFinished) return;
    if (res.writableLength <= this.#limits.maxBufferedBytes) return this.#caughtUp();
    this.#cut('stream');
  }

  /** Cuts a client that fell behind at once: what it has not read is stale, and holding it is the cost being bounded (it can resume). */
  #cut(cause: 'stream' | 'total'): void {
    if (this.#res.destroyed) return;
    this.stop();
    this.#limits.onOverflow?.(cause);
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
