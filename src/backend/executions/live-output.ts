// Output past the output files' cap, delivered live (issue 30, item 3): the cap bounds
// what is kept, not what a reader following the execution gets. Each reader that
// follows a running execution (an SSE stream) holds a queue of the bytes written past
// the cap since it began to follow; when its stream reaches a `gap` with `kept: false`,
// it sends the queued bytes of that range as `output` events instead (sse.ts). Nothing
// of it is stored: a reader that follows later, or replays after the fact, gets the
// `gap` with `kept: false` (those bytes are lost).
//
// A reader behind the command would make its queue grow without end, so past
// LIVE_QUEUE_MAX_BYTES the run's output is paused (its pipes fill and the command's
// writes block, as with any pipe whose reader is slow) until every reader drained its
// queue below the bound. Where the run cannot be paused (a terminal's output, or a run
// that is being ended), bytes past twice the bound are dropped for that reader and
// its stream says so (a `gap` with `kept: false` for exactly those bytes).

import type { OutputStream } from "../../protocol/types.js";

/** Bytes a reader may hold queued before the run's output is paused for it. */
export const LIVE_QUEUE_MAX_BYTES = 8 * 1024 * 1024;

/** Pauses and resumes a run's output (its pipes); a no-op where it cannot be paused. */
export interface OutputPacer {
  pause(): void;
  resume(): void;
}

/** Bytes of a stream at an offset. */
export interface LivePiece {
  offset: number;
  bytes: Buffer;
}

/** One reader's queue of the bytes past the cap, in stream order. */
export class LiveReader {
  private readonly queues: Record<OutputStream, LivePiece[]> = { stdout: [], stderr: [] };
  /** Bytes queued, both streams. */
  queued = 0;

  constructor(
    private readonly owner: LiveOutput,
    private readonly maxBytes: number,
  ) {}

  /** @internal Queues bytes (LiveOutput.offer); drops them when far past the bound. False when over it. */
  push(stream: OutputStream, offset: number, bytes: Buffer): boolean {
    if (this.queued + bytes.length > 2 * this.maxBytes) return false;
    this.queues[stream].push({ offset, bytes });
    this.queued += bytes.length;
    return this.queued <= this.maxBytes;
  }

  /**
   * Hands over the queued bytes of [offset, offset + length) of a stream, in order,
   * and forgets everything of that stream before its end. Bytes of the range it does
   * not hold (it began to follow later, or dropped them) are the holes between pieces.
   */
  take(stream: OutputStream, offset: number, length: number): LivePiece[] {
    const end = offset + length;
    const queue = this.queues[stream];
    const out: LivePiece[] = [];
    while (queue.length > 0) {
      const piece = queue[0]!;
      const pieceEnd = piece.offset + piece.bytes.length;
      if (piece.offset >= end) break;
      const from = Math.max(offset, piece.offset);
      const to = Math.min(end, pieceEnd);
      if (to > from) out.push({ offset: from, bytes: piece.bytes.subarray(from - piece.offset, to - piece.offset) });
      if (pieceEnd <= end) {
        queue.shift();
        this.queued -= piece.bytes.length;
      } else {
        queue[0] = { offset: end, bytes: piece.bytes.subarray(end - piece.offset) };
        this.queued -= end - piece.offset;
        break;
      }
    }
    this.owner.drained();
    return out;
  }

  /** The reader is gone: it holds nothing back any more. */
  close(): void {
    this.queues.stdout = [];
    this.queues.stderr = [];
    this.queued = 0;
    this.owner.leave(this);
  }
}

/** One running execution's readers of its output past the cap. */
export class LiveOutput {
  private readonly readers = new Set<LiveReader>();
  private pacer: OutputPacer | null = null;
  private paused = false;
  /** Set once the run is being ended: it is never paused again. */
  private released = false;

  constructor(
    private readonly maxBytes: number = LIVE_QUEUE_MAX_BYTES,
    /** Called when the run was paused: what the readers wait for should be sent soon. */
    private readonly onPause: () => void = () => {},
  ) {}

  /** A new reader: it gets every byte past the cap written from now on. */
  follow(): LiveReader {
    const reader = new LiveReader(this, this.maxBytes);
    this.readers.add(reader);
    return reader;
  }

  /** How the run's output is paused while a reader is behind. */
  pacedBy(pacer: OutputPacer): void {
    this.pacer = pacer;
  }

  /** Nothing is held back from now on (the run is being ended, or has ended). */
  release(): void {
    this.released = true;
    this.resume();
  }

  get hasReaders(): boolean {
    return this.readers.size > 0;
  }

  /** Bytes written past the cap, at their offset in the stream: to every reader. */
  offer(stream: OutputStream, offset: number, bytes: Buffer): void {
    let over = false;
    for (const reader of this.readers) if (!reader.push(stream, offset, bytes)) over = true;
    if (over && !this.paused && !this.released && this.pacer !== null) {
      this.paused = true;
      this.pacer.pause();
      this.onPause();
    }
  }

  /** @internal A reader took bytes: resume once every reader is within the bound. */
  drained(): void {
    if (!this.paused) return;
    for (const reader of this.readers) if (reader.queued > this.maxBytes) return;
    this.resume();
  }

  /** @internal */
  leave(reader: LiveReader): void {
    this.readers.delete(reader);
    this.drained();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.pacer?.resume();
  }
}
