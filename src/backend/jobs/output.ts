// A job's output, kept as ordered chunks {seq, stream, offset, data} in backend.db
// within a per-job budget: the first half of the budget is kept as it came (the
// head), then the latest bytes (the tail); what falls out of the tail is the omitted
// middle, counted in output_omitted_bytes. OutputKeeper decides that without I/O;
// JobOutputLog buffers the output of every running job and commits it in one
// transaction every few milliseconds, then tells the manager whose output grew.

import type { JobStream } from "../../protocol/jobs.js";
import type { JobOutputRow, JobStore } from "./store.js";

/** Default bytes of output kept per job (both streams): 4 MiB of head, 4 MiB of tail. */
export const DEFAULT_JOB_OUTPUT_BUDGET = 8 * 1024 * 1024;
export const DEFAULT_JOB_OUTPUT_FLUSH_MS = 25;
/**
 * After a flush that stored this much, the next waits BUSY_FLUSH_FACTOR times longer:
 * past the budget, output that arrives within one wait and falls out of the tail is
 * never written at all, so a job printing fast costs far fewer writes.
 */
const BUSY_FLUSH_BYTES = 1024 * 1024;
const BUSY_FLUSH_FACTOR = 10;
/** Largest chunk stored, so that the tail is trimmed in small steps. */
const CHUNK_LIMIT = 64 * 1024;

export interface OutputBudget {
  headBytes: number;
  tailBytes: number;
  chunkBytes: number;
}

/** Splits a budget (at least 2 bytes) into head and tail, with chunks small enough to trim the tail finely. */
export function outputBudget(totalBytes: number): OutputBudget {
  if (!Number.isSafeInteger(totalBytes) || totalBytes < 2)
    throw new RangeError("the job output budget must be ≥ 2 bytes");
  const headBytes = Math.floor(totalBytes / 2);
  const tailBytes = totalBytes - headBytes;
  return { headBytes, tailBytes, chunkBytes: Math.max(1, Math.min(CHUNK_LIMIT, Math.floor(tailBytes / 4))) };
}

export interface KeptChunk {
  seq: number;
  stream: JobStream;
  offset: number;
  head: boolean;
  data: Buffer;
}

/** What storing some output changes: chunks to insert, and seqs of stored tail chunks to delete. */
export interface KeepDecision {
  insert: KeptChunk[];
  remove: number[];
}

/** Decides which output is kept: the head as it came, then a tail trimmed from its front. */
export class OutputKeeper {
  private seq = 0;
  private bytes = 0;
  private headKept = 0;
  private omitted = 0;
  private readonly tail: Array<{ seq: number; length: number }> = [];
  private tailKept = 0;

  constructor(private readonly budget: OutputBudget) {}

  /** The last seq given out. */
  get lastSeq(): number {
    return this.seq;
  }

  /** Bytes produced so far. */
  get totalBytes(): number {
    return this.bytes;
  }

  get omittedBytes(): number {
    return this.omitted;
  }

  /** Bytes the head still takes. */
  get headRoom(): number {
    return this.budget.headBytes - this.headKept;
  }

  get tailBytes(): number {
    return this.budget.tailBytes;
  }

  /**
   * Counts bytes as omitted without looking at them: for output known to fall out of
   * the tail anyway (more than the tail holds follows it in the same flush).
   */
  omit(length: number): void {
    this.bytes += length;
    this.omitted += length;
  }

  take(stream: JobStream, data: Buffer): KeepDecision {
    const insert: KeptChunk[] = [];
    const remove: number[] = [];
    for (let at = 0; at < data.length; ) {
      let length = Math.min(this.budget.chunkBytes, data.length - at);
      const head = this.headKept < this.budget.headBytes;
      if (head) length = Math.min(length, this.budget.headBytes - this.headKept);
      const chunk: KeptChunk = {
        seq: ++this.seq,
        stream,
        offset: this.bytes,
        head,
        data: data.subarray(at, at + length),
      };
      at += length;
      this.bytes += length;
      insert.push(chunk);
      if (head) {
        this.headKept += length;
        continue;
      }
      this.tail.push({ seq: chunk.seq, length });
      this.tailKept += length;
      while (this.tailKept > this.budget.tailBytes) {
        const dropped = this.tail.shift()!;
        this.tailKept -= dropped.length;
        this.omitted += dropped.length;
        // Not stored yet: never insert it; stored earlier: delete it.
        const pending = insert.findIndex((c) => c.seq === dropped.seq);
        if (pending >= 0) insert.splice(pending, 1);
        else remove.push(dropped.seq);
      }
    }
    return { insert, remove };
  }
}

/** The output of one running job, buffered until the next flush. */
export class JobOutputWriter {
  private pending: Array<{ stream: JobStream; parts: Buffer[]; length: number }> = [];

  constructor(
    readonly jobId: string,
    readonly keeper: OutputKeeper,
    private readonly onData: () => void,
  ) {}

  push(stream: JobStream, chunk: Buffer): void {
    if (chunk.length === 0) return;
    const last = this.pending[this.pending.length - 1];
    // Consecutive output of one stream becomes one piece (the keeper cuts it into chunks).
    if (last && last.stream === stream) {
      last.parts.push(chunk);
      last.length += chunk.length;
    } else {
      this.pending.push({ stream, parts: [chunk], length: chunk.length });
    }
    this.onData();
  }

  get dirty(): boolean {
    return this.pending.length > 0;
  }

  /**
   * What the pending output changes in the store; clears the buffer. Of what follows
   * the head, only the last tail's worth can be kept: bytes before it are counted as
   * omitted without being copied or stored.
   */
  drain(): KeepDecision {
    const insert: KeptChunk[] = [];
    const remove: number[] = [];
    const total = this.pending.reduce((n, p) => n + p.length, 0);
    let headLeft = this.keeper.headRoom;
    let skip = Math.max(0, total - headLeft - this.keeper.tailBytes);
    const take = (stream: JobStream, data: Buffer) => {
      const d = this.keeper.take(stream, data);
      // A chunk taken earlier in this drain and dropped now was never stored: drop it here too.
      for (const seq of d.remove) {
        const i = insert.findIndex((c) => c.seq === seq);
        if (i >= 0) insert.splice(i, 1);
        else remove.push(seq);
      }
      insert.push(...d.insert);
    };
    for (const piece of this.pending) {
      const head = Math.min(piece.length, headLeft);
      const skipped = Math.min(piece.length - head, skip);
      headLeft -= head;
      skip -= skipped;
      if (head > 0) take(piece.stream, sliceParts(piece.parts, 0, head));
      if (skipped > 0) this.keeper.omit(skipped);
      if (head + skipped < piece.length) take(piece.stream, sliceParts(piece.parts, head + skipped, piece.length));
    }
    this.pending = [];
    return { insert, remove };
  }
}

/** Bytes [from, to) of a sequence of buffers, copied once. */
function sliceParts(parts: readonly Buffer[], from: number, to: number): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (const p of parts) {
    const start = Math.max(from, at);
    const end = Math.min(to, at + p.length);
    if (start < end) out.push(p.subarray(start - at, end - at));
    at += p.length;
    if (at >= to) break;
  }
  return out.length === 1 ? out[0]! : Buffer.concat(out);
}

export interface JobOutputLogOptions {
  store: JobStore;
  budgetBytes?: number;
  flushMs?: number;
  /** Called after a flush with the jobs whose kept output changed. */
  onFlushed: (jobIds: string[]) => void;
  log: (line: string) => void;
}

/** Buffers every running job's output and commits it in one transaction per flush. */
export class JobOutputLog {
  private readonly writers = new Map<string, JobOutputWriter>();
  private readonly budget: OutputBudget;
  private readonly flushMs: number;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private readonly failed = new Set<string>();

  constructor(private readonly opts: JobOutputLogOptions) {
    this.budget = outputBudget(opts.budgetBytes ?? DEFAULT_JOB_OUTPUT_BUDGET);
    this.flushMs = opts.flushMs ?? DEFAULT_JOB_OUTPUT_FLUSH_MS;
  }

  open(jobId: string): JobOutputWriter {
    const writer = new JobOutputWriter(jobId, new OutputKeeper(this.budget), () => this.arm());
    this.writers.set(jobId, writer);
    return writer;
  }

  /** Commits what the job's writer holds, inside the caller's transaction, and forgets the writer. */
  closeInTransaction(jobId: string): void {
    const writer = this.writers.get(jobId);
    if (!writer) return;
    this.writers.delete(jobId);
    this.write(writer);
  }

  /** Drops a job's writer and whatever it holds (a run that never started). */
  forget(jobId: string): void {
    this.writers.delete(jobId);
  }

  /** Commits every writer's pending output in one transaction. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const dirty = [...this.writers.values()].filter((w) => w.dirty);
    if (dirty.length === 0 || this.opts.store.isClosed) return;
    try {
      const stored = this.opts.store.transaction(() => dirty.reduce((sum, w) => sum + this.write(w), 0));
      this.busy = stored >= BUSY_FLUSH_BYTES;
    } catch (err) {
      this.opts.log(`jobs: could not store output: ${(err as Error).message}`);
    }
    this.opts.onFlushed(dirty.map((w) => w.jobId));
  }

  /** Stops flushing; buffered output is dropped (a crash, or the store closing). */
  abandon(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writers.clear();
  }

  private arm(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => this.flush(), this.busy ? this.flushMs * BUSY_FLUSH_FACTOR : this.flushMs);
  }

  /** Stores what the writer holds; returns the bytes inserted. */
  private write(writer: JobOutputWriter): number {
    const { insert, remove } = writer.drain();
    const store = this.opts.store;
    try {
      for (const seq of remove) store.deleteOutput(writer.jobId, seq);
      for (const c of insert) store.insertOutput(writer.jobId, toRow(c));
    } catch (err) {
      // E.g. a full disk: the job runs on; say so once.
      if (!this.failed.has(writer.jobId)) {
        this.failed.add(writer.jobId);
        this.opts.log(`job ${writer.jobId}: could not keep its output: ${(err as Error).message}`);
      }
    }
    const k = writer.keeper;
    store.updateJob(writer.jobId, {
      output_bytes: k.totalBytes,
      output_omitted_bytes: k.omittedBytes,
      output_last_seq: k.lastSeq,
    });
    return insert.reduce((sum, c) => sum + c.data.length, 0);
  }
}

function toRow(c: KeptChunk): JobOutputRow {
  return { seq: c.seq, stream: c.stream, byte_offset: c.offset, head: c.head ? 1 : 0, data: c.data };
}
