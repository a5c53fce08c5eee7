/**
 * SSE send buffers without HTTP. The budget: streams writing to responses whose clients read
 * nothing never hold more than the budget together after any write, and the stream furthest behind
 * is the one cut; a stream whose client reads is left alone. One stream: a client whose socket
 * sends nothing for a turn of the event loop while past streamBufferBytes is cut at its next write.
 */
import type { Response } from 'express';
import { Heartbeat, SseWriter, type SseLimits } from '../../lib/http/sse';
import { StreamBufferBudget } from '../../lib/http/sse-budget';

/** A response whose client reads only when told: write() buffers, read() takes it all. */
class FakeResponse {
  writableLength = 0;
  writableFinished = false;
  destroyed = false;
  statusCode = 0;
  /** A socket whose handle reports `unsent` bytes the kernel did not take (null: not known). */
  socket: { _handle: { writeQueueSize: number }; _bytesDispatched: number } | null = null;
  /** Told after each write (the moment bytes were handed over, before anything is cut). */
  onWrite: (() => void) | undefined;
  setHeader(): void {}
  flushHeaders(): void {}
  write(chunk: string | Buffer): boolean {
    this.writableLength += chunk.length;
    this.onWrite?.();
    return true;
  }
  end(): void {}
  destroy(): void {
    this.destroyed = true;
    this.writableLength = 0;
  }
  read(): void {
    this.writableLength = 0;
  }
}

function streams(
  count: number,
  budgetBytes: number,
): { writers: SseWriter[]; responses: FakeResponse[]; budget: StreamBufferBudget; cuts: string[] } {
  const cuts: string[] = [];
  const budget = new StreamBufferBudget(budgetBytes);
  // Each stream's own bound is far away: only the budget cuts here.
  const limits: SseLimits = {
    heartbeat: new Heartbeat(0),
    maxBufferedBytes: 1 << 30,
    stallMs: 600_000,
    budget,
    onOverflow: (cause) => cuts.push(cause),
  };
  const responses = Array.from({ length: count }, () => new FakeResponse());
  const writers = responses.map((res) => new SseWriter(res as unknown as Response, limits));
  return { writers, responses, budget, cuts };
}

const EVENT = JSON.stringify({ text: 'x'.repeat(10_000) });

describe('StreamBufferBudget', () => {
  it('bounds the bytes all streams hold after every write; a reading client is never cut', () => {
    const { writers, responses, budget, cuts } = streams(5, 100_000);
    for (let round = 0; round < 50; round++) {
      writers.forEach((writer, i) => {
        writer.send(EVENT, round);
        if (i === 0) responses[0].read();
        const held = responses.filter((res) => !res.destroyed).reduce((sum, res) => sum + res.writableLength, 0);
        expect(held).toBeLessThanOrEqual(100_000);
        expect(budget.total).toBeLessThanOrEqual(100_000);
      });
    }
    expect(responses[0].destroyed).toBe(false);
    expect(responses.slice(1).every((res) => res.destroyed)).toBe(true);
    expect(cuts).toEqual(['total', 'total', 'total', 'total']);
  });

  it('checks the bound before a write: bytes that would pass it are never handed to a socket', () => {
    const { writers, responses, budget } = streams(4, 100_000);
    const frame = EVENT.length + 'data: \n\n'.length;
    let most = 0;
    // Measured at every write itself: a bound checked only after a write would be past here first.
    let atWrite = 0;
    const live = () => responses.filter((res) => !res.destroyed).reduce((sum, res) => sum + res.writableLength, 0);
    for (const res of responses) res.onWrite = () => (atWrite = Math.max(atWrite, live()));
    // Every write of the burst: what all the responses hold never passes the bound, not even for a
    // moment before a stream is cut (a cut stream writes nothing more).
    for (let round = 0; round < 30; round++) {
      for (const writer of writers) {
        writer.send(EVENT);
        const held = responses.filter((res) => !res.destroyed).reduce((sum, res) => sum + res.writableLength, 0);
        most = Math.max(most, held);
        expect(held).toBeLessThanOrEqual(100_000);
        expect(budget.total).toBeLessThanOrEqual(100_000);
      }
    }
    expect(atWrite).toBeLessThanOrEqual(100_000);
    // The bound was used, not avoided by cutting early: within one frame (and its framing room) of it.
    expect(most).toBeGreaterThan(100_000 - 2 * frame - 128);
    expect(responses.every((res) => res.destroyed)).toBe(true);
  });

  it('an event larger than the whole bound goes to a stream with nothing buffered, and nobody is cut for it', () => {
    const { writers, responses, cuts } = streams(2, 100_000);
    writers[0].send(EVENT);
    writers[1].send(JSON.stringify({ text: 'y'.repeat(150_000) }));
    expect(responses.map((res) => res.destroyed)).toEqual([false, false]);
    expect(cuts).toEqual([]);
  });

  it('cuts the stream furthest behind, not the one writing', () => {
    const { writers, responses } = streams(3, 100_000);
    for (let i = 0; i < 5; i++) writers[0].send(EVENT); // ~50 KB behind
    for (let i = 0; i < 3; i++) writers[1].send(EVENT); // ~30 KB behind
    for (let i = 0; i < 3; i++) writers[2].send(EVENT); // past 100 KB together on the third
    expect(responses.map((res) => res.destroyed)).toEqual([true, false, false]);
  });

  it('counts what a client read since its last write before cutting anyone', () => {
    const { writers, responses } = streams(2, 100_000);
    for (let i = 0; i < 9; i++) writers[0].send(EVENT);
    // Its client reads everything, but the stream writes nothing more: its count is stale.
    responses[0].read();
    for (let i = 0; i < 5; i++) writers[1].send(EVENT);
    expect(responses.map((res) => res.destroyed)).toEqual([false, false]);
  });

  it('a stream that leaves gives its bytes back', () => {
    const { writers, budget } = streams(2, 100_000);
    for (let i = 0; i < 5; i++) writers[0].send(EVENT);
    expect(budget.total).toBeGreaterThan(50_000);
    writers[0].stop();
    expect(budget.total).toBe(0);
  });
});

describe('SseWriter: one stream past streamBufferBytes', () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  const limits = (cuts: string[]): SseLimits => ({
    heartbeat: new Heartbeat(0),
    maxBufferedBytes: 50_000,
    stallMs: 600_000,
    budget: new StreamBufferBudget(1 << 30),
    onOverflow: (cause) => cuts.push(cause),
  });

  it('a client whose socket sent nothing for a turn is cut at the next write, far below 16 times the bound', async () => {
    const cuts: string[] = [];
    const res = new FakeResponse();
    res.socket = { _handle: { writeQueueSize: 200_000 }, _bytesDispatched: 1_000_000 };
    const writer = new SseWriter(res as unknown as Response, limits(cuts));
    for (let i = 0; i < 6; i++) writer.send(EVENT); // past the bound in this turn: not judged yet
    expect(res.destroyed).toBe(false);
    await nextTurn();
    await nextTurn();
    writer.send(EVENT);
    expect(res.destroyed).toBe(true);
    expect(cuts).toEqual(['stream']);
    expect(res.writableLength).toBe(0);
  });

  it('a client whose socket keeps sending is not cut; one back within the bound is watched no more', async () => {
    const cuts: string[] = [];
    const res = new FakeResponse();
    const handle = { writeQueueSize: 200_000 };
    res.socket = { _handle: handle, _bytesDispatched: 1_000_000 };
    const writer = new SseWriter(res as unknown as Response, limits(cuts));
    for (let i = 0; i < 6; i++) writer.send(EVENT);
    for (let turn = 0; turn < 5; turn++) {
      await nextTurn();
      await nextTurn();
      handle.writeQueueSize -= 30_000; // the client reads
      writer.send(EVENT);
    }
    expect(res.destroyed).toBe(false);
    res.read();
    writer.send(EVENT);
    expect(cuts).toEqual([]);
  });

  it('one event larger than the bound goes to a client that was within it', () => {
    const cuts: string[] = [];
    const res = new FakeResponse();
    res.socket = { _handle: { writeQueueSize: 0 }, _bytesDispatched: 0 };
    const writer = new SseWriter(res as unknown as Response, limits(cuts));
    writer.send(JSON.stringify({ text: 'y'.repeat(200_000) }));
    expect(res.destroyed).toBe(false);
    expect(cuts).toEqual([]);
  });

  it('a client that does not read that larger event within stallMs is cut; one that reads it is not', () => {
    jest.useFakeTimers();
    try {
      const big = JSON.stringify({ text: 'y'.repeat(200_000) });
      const cuts: string[] = [];
      const stuck = new FakeResponse();
      new SseWriter(stuck as unknown as Response, limits(cuts)).send(big);
      const reading = new FakeResponse();
      const writer = new SseWriter(reading as unknown as Response, limits(cuts));
      writer.send(big);
      reading.read();
      writer.send(EVENT);
      jest.advanceTimersByTime(600_000);
      expect([stuck.destroyed, reading.destroyed]).toEqual([true, false]);
      expect(cuts).toEqual(['stream']);
    } finally {
      jest.useRealTimers();
    }
  });
});
