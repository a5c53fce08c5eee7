/**
 * The one SSE writer: headers, `data:` framing, comment heartbeats, the final error frame, a
 * bounded send buffer and clean-up on close. The stream opens lazily, so an error found before the
 * first event can still be answered as a plain JSON response.
 */
import type { Response } from 'express';
import { unsentInHandle } from '../internals/socket-write-queue.js';

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
   * Bytes a stream may have waiting for its client. A client further behind than this is cut: its
   * connection is closed at once (the task is not affected; the client resumes with Last-Event-ID
   * and misses nothing). One event larger than this still goes through to a client that was
   * caught up, which then has `stallMs` to read it.
   */
  readonly maxBufferedBytes: number;
  readonly stallMs: number;
  /** The bound on the bytes waiting for the clients of all the streams that share it. */
  readonly budget: StreamBufferBudget;
  /** Told once when a stream is cut for falling behind: past its own bound, or the furthest behind when the total was. */
  readonly onOverflow?: (cause: 'stream' | 'total') => void;
}

/** What the budget needs of a stream. */
interface BudgetMember {
  /** Reads the bytes buffered now (they were counted as of the stream's last write). */
  recount(): number;
  /** Cuts the stream (it leaves the budget). */
  cutOverBudget(): void;
}

/**
 * The bytes buffered for slow clients by many streams, bounded together: past the bound, the
 * streams furthest behind are cut until the rest fits. A stream's count is refreshed at each of
 * its writes (no timer, no per-chunk callback), so between writes it may count bytes its client
 * has read since; every count is read again before anyone is cut.
 */
export class StreamBufferBudget {
  readonly maxBytes: number;
  #total = 0;
  /** Streams counted with bytes buffered. */
  readonly #members = new Set<BudgetMember>();

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes counted for all streams (0 when every client has read everything at its last write). */
  get total(): number {
    return this.#total;
  }

  /** A stream's buffer went from `previous` to `bytes`; may cut streams, this one included. */
  update(member: BudgetMember, previous: number, bytes: number): void {
    this.#total += bytes - previous;
    if (bytes > 0) this.#members.add(member);
    if (this.#total > this.maxBytes) this.#relieve();
  }

  /** A stream is gone, with the bytes it was counted for. */
  leave(member: BudgetMember, counted: number): void {
    if (!this.#members.delete(member)) return;
    this.#total -= counted;
  }

  #relieve(): void {
    let total = 0;
    for (const member of this.#members) {
      const bytes = member.recount();
      if (bytes === 0) this.#members.delete(member);
      total += bytes;
    }
    this.#total = total;
    while (this.#total > this.maxBytes) {
      let furthest: BudgetMember | undefined;
      let most = 0;
      for (const member of this.#members) {
        const bytes = member.recount();
        if (bytes > most) [furthest, most] = [member, bytes];
      }
      if (!furthest) return;
      furthest.cutOverBudget();
    }
  }
}

const PING = ': ping\n\n';
/** Room for the chunked-encoding framing written with an event. */
const FRAMING_BYTES = 64;

/** Nothing observed yet: the stream went past its bound in the current turn of the event loop. */
const NOT_YET = -1;

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
   * Set while the client is past its allowance: what its socket had not sent when last seen
   * (NOT_YET until the writes of the turn that took it past were flushed). A client that sent
   * nothing since is not reading, and is cut.
   */
  #unsentMark: number | undefined;
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

  #write(frame: string): void {
    if (this.#closed) return;
    this.#open();
    const res = this.#res;
    const { maxBufferedBytes, budget } = this.#limits;
    // One event larger than the bound goes to a client that was within it, which has stallMs to read it.
    if (frame.length > maxBufferedBytes && res.writableLength <= maxBufferedBytes) {
      this.#allowance = maxBufferedBytes + frame.length + FRAMING_BYTES;
      this.#watchStall();
    }
    res.write(frame);
    // write() buffers whatever the client has not taken yet: a client that stops reading must not
    // make the server hold the stream, and all slow clients together must not hold more than the budget.
    const behind = res.writableLength;
    if (behind > this.#allowance) {
      if (this.#behindAndNotReading()) return this.#cut('stream');
    } else if (behind <= maxBufferedBytes && (this.#unsentMark !== undefined || this.#stall !== undefined || this.#allowance !== maxBufferedBytes)) {
      this.#caughtUp();
    }
    const counted = this.#counted;
    if (behind !== counted) {
      this.#counted = behind;
      budget.update(this, counted, behind);
    }
  }

  /**
   * Past the allowance: true when the client has taken nothing since it was last seen past it. The
   * writes of one turn of the event loop are flushed together at its end, so a client that was
   * caught up is first judged once they were (a burst is not a slow reader; the budget bounds a
   * burst for all streams together). Without the socket's own count, the client has stallMs.
   */
  #behindAndNotReading(): boolean {
    const unsent = this.#unsentMark;
    if (unsent === undefined) {
      this.#unsentMark = NOT_YET;
      // Marked after this turn's writes were flushed, judged from the next turn on: the client has
      // had a poll phase of the event loop to take some of it.
      setImmediate(() => {
        const mark = unsentInHandle(this.#res);
        if (mark !== undefined) setImmediate(() => this.#unsentMark === NOT_YET && (this.#unsentMark = mark));
      });
      this.#watchStall();
      return false;
    }
    if (unsent === NOT_YET) return false;
    const now = unsentInHandle(this.#res) ?? 0;
    if (now > 0 && now >= unsent) return true;
    this.#unsentMark = now;
    return false;
  }

  /** Back within the bound: the usual allowance, no watch. */
  #caughtUp(): void {
    clearTimeout(this.#stall);
    this.#stall = undefined;
    this.#unsentMark = undefined;
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

  /**
   * Cuts a stream whose client fell behind: what it has not read is stale by now, and holding it is
   * the cost being bounded, so the connection is closed at once (the client can resume).
   */
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
