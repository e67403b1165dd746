// Turning one execution's output into draft events, without I/O (the event log,
// events.ts, numbers and commits them): output chunks coalesced into events of at
// most 64 KiB, then, past the budget, counted into `gap`s — at most one per stream a
// second, split at the output files' cap. Pure, table-tested (test/backend/events.test.ts).

import {
  EVENT_OUTPUT_BUDGET,
  EVENT_OUTPUT_CHUNK_LIMIT,
  type ExecutionEventType,
  type GapEventData,
  type OutputStream,
} from "../../protocol/types.js";
import { OUTPUT_STREAMS } from "./output-files.js";

/** Past the budget, one `gap` event per stream at most this often (and one at the end). */
export const GAP_EVENT_INTERVAL_MS = 1000;

/** Each stream's byte offset covered by the events so far. */
export interface StreamEnds {
  stdout: number;
  stderr: number;
}

/**
 * A `gap` as stored: `kept: false` when its bytes are past the output files' cap too
 * (not readable from …/output); absent when they are on disk.
 */
export type GapData = GapEventData & { kept?: false };

/** An event not yet numbered. */
export interface DraftEvent {
  type: ExecutionEventType;
  at: string;
  data: unknown;
  ends: StreamEnds;
}

type Draft =
  | {
      type: "output";
      at: string;
      stream: OutputStream;
      offset: number;
      chunks: Buffer[];
      length: number;
      ends: StreamEnds;
    }
  | { type: Exclude<ExecutionEventType, "output">; at: string; data: unknown; ends: StreamEnds };

/**
 * Turns one execution's output into draft events, without I/O: chunks of a stream
 * are coalesced into `output` events of at most `chunkLimit` raw bytes; past
 * `budget` bytes in all, output is counted into `gap`s instead.
 */
export class EventDrafter {
  private drafts: Draft[] = [];
  private budgetLeft: number;
  /** Bytes each stream produced. */
  private readonly produced: StreamEnds = { stdout: 0, stderr: 0 };
  /** Bytes each stream's drafted events cover. */
  private readonly covered: StreamEnds = { stdout: 0, stderr: 0 };
  private readonly lastGapAt: Record<OutputStream, number> = { stdout: -Infinity, stderr: -Infinity };

  constructor(
    budget: number = EVENT_OUTPUT_BUDGET,
    private readonly chunkLimit: number = EVENT_OUTPUT_CHUNK_LIMIT,
    /** Bytes of each stream the output files keep (their cap): gaps are split there. */
    private readonly keepLimit: number = Number.POSITIVE_INFINITY,
  ) {
    this.budgetLeft = budget;
  }

  get hasDrafts(): boolean {
    return this.drafts.length > 0;
  }

  /** Output not yet drafted as a gap (waiting for GAP_EVENT_INTERVAL_MS). */
  get hasPendingGap(): boolean {
    return this.produced.stdout > this.covered.stdout || this.produced.stderr > this.covered.stderr;
  }

  output(stream: OutputStream, chunk: Buffer, at: string): void {
    const start = this.produced[stream];
    this.produced[stream] += chunk.length;
    // Once a stream has a gap, the rest of it is gap too (the budget is spent).
    const keep = this.covered[stream] < start ? 0 : Math.min(chunk.length, this.budgetLeft);
    this.budgetLeft -= keep;
    let done = 0;
    while (done < keep) {
      const last = this.drafts[this.drafts.length - 1];
      const coalesce = last?.type === "output" && last.stream === stream && last.length < this.chunkLimit;
      const room = coalesce ? this.chunkLimit - last.length : this.chunkLimit;
      const piece = chunk.subarray(done, done + Math.min(room, keep - done));
      done += piece.length;
      this.covered[stream] += piece.length;
      if (coalesce) {
        last.chunks.push(piece);
        last.length += piece.length;
        last.ends = { ...this.covered };
      } else {
        const offset = this.covered[stream] - piece.length;
        this.drafts.push({
          type: "output",
          at,
          stream,
          offset,
          chunks: [piece],
          length: piece.length,
          ends: { ...this.covered },
        });
      }
    }
  }

  /**
   * Drafts gaps that are due: every GAP_EVENT_INTERVAL_MS per stream, or all of them
   * when `final`. A gap never straddles the output files' cap: bytes before it are
   * readable from …/output; a gap past it carries `kept: false` (in no event and not
   * on disk: only counted in the record's `_bytes`, `_truncated` true).
   */
  releaseGaps(nowMs: number, final: boolean): void {
    for (const stream of OUTPUT_STREAMS) {
      const end = this.produced[stream];
      if (end === this.covered[stream] || (!final && nowMs - this.lastGapAt[stream] < GAP_EVENT_INTERVAL_MS)) continue;
      this.lastGapAt[stream] = nowMs;
      const at = new Date(nowMs).toISOString();
      if (this.covered[stream] < this.keepLimit && end > this.keepLimit) this.gap(stream, this.keepLimit, at);
      this.gap(stream, end, at);
    }
  }

  /** Drafts one gap from what the stream's events cover to `end`. */
  private gap(stream: OutputStream, end: number, at: string): void {
    const offset = this.covered[stream];
    const bytes = end - offset;
    this.covered[stream] = end;
    const data: GapData = offset >= this.keepLimit ? { stream, offset, bytes, kept: false } : { stream, offset, bytes };
    this.push("gap", data, at);
  }

  push(type: Exclude<ExecutionEventType, "output">, data: unknown, at: string): void {
    this.drafts.push({ type, at, data, ends: { ...this.covered } });
  }

  /** Puts an event before every draft (the `started` event, should output have come first). */
  unshift(type: Exclude<ExecutionEventType, "output">, data: unknown, at: string): void {
    this.drafts.unshift({ type, at, data, ends: { stdout: 0, stderr: 0 } });
  }

  /** Hands over the drafts, in order. */
  take(): DraftEvent[] {
    const out = this.drafts.map((d): DraftEvent => {
      if (d.type !== "output") return { type: d.type, at: d.at, data: d.data, ends: d.ends };
      const data = { stream: d.stream, offset: d.offset, data: Buffer.concat(d.chunks, d.length).toString("base64") };
      return { type: "output", at: d.at, data, ends: d.ends };
    });
    this.drafts = [];
    return out;
  }
}
