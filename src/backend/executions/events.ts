// The durable per-execution event log (started, output…, gap, exit, end), kept in
// backend.db (execution_events). Output is turned into events by a pure drafter
// (event-drafter.ts: ≤ 64 KiB per event, coalesced, a 5 MiB budget then `gap`s); the
// EventLog batches drafts of every running execution into one transaction every
// few milliseconds (one fsync per batch, not per chunk), numbers them 1, 2, … per
// execution, keeps the record's last_event_id with them, trims old events past the
// retention and wakes stream readers once a batch is committed. Readers only ever
// see committed events, so an id once sent always names the same event.

import fs from "node:fs";
import {
  EVENT_OUTPUT_BUDGET,
  EVENT_OUTPUT_CHUNK_LIMIT,
  type EndEventData,
  type ExecutionEvent,
  type ExecutionEventType,
  type ExitEventData,
  type OutputStream,
  type ResetEventData,
  type StartedEventData,
} from "../../protocol/types.js";
import { RunListeners } from "../runs/index.js";
import type { BackendStore } from "../store/index.js";
import { type EventBaseRow, type EventRow, ExecutionStore } from "./store.js";
import {
  DEFAULT_EXECUTION_OUTPUT_MAX_BYTES,
  OUTPUT_STREAMS,
  OutputFiles,
  outputSize,
  readOutputRange,
} from "./output-files.js";
import { type DraftEvent, EventDrafter, type StreamEnds } from "./event-drafter.js";
import { LIVE_QUEUE_MAX_BYTES, LiveOutput, type LiveReader } from "./live-output.js";

export const DEFAULT_EVENT_FLUSH_MS = 25;
/** Events kept per execution; older ones are folded into a `reset` snapshot. */
export const DEFAULT_EVENT_RETENTION = 50_000;
/** Bytes of each stream a `reset` carries. */
export const RESET_SNAPSHOT_LIMIT = 64 * 1024;
export interface EventLogOptions {
  store: BackendStore;
  /** Where an execution's full output files live. */
  outputDir: (sandboxId: string, executionId: string) => string;
  flushMs?: number;
  /** Events kept per execution (at least 2); null keeps all. */
  retainEvents?: number | null;
  /** Output bytes put into events per execution. */
  outputBudget?: number;
  /** Bytes of each stream an execution's output file keeps. Default 256 MiB. */
  outputMaxBytes?: number;
  /** Bytes past the cap a live reader may be behind before the run is paused (live-output.ts). */
  liveQueueMaxBytes?: number;
  log?: (line: string) => void;
  /** The backend's clock: every event's `at`, and when a gap event is due. Default Date.now. */
  now?: () => number;
}

/** Everything that makes an execution's event log end. */
export interface LogEnding {
  exit: ExitEventData;
  end: EndEventData;
}

/** A committed-or-not unit: numbered events of several executions, and the work stored with them. */
interface Batch {
  rows: Array<{ executionId: string; rows: EventRow[] }>;
  work: (() => void) | undefined;
  /** Called once the batch is committed (after a failed first try: once a retry commits it). */
  saved: (() => void) | undefined;
}

/** After a failed commit (a full disk), retries start after this and back off to the max. */
export const STORE_RETRY_MIN_MS = 1000;
export const STORE_RETRY_MAX_MS = 30_000;

export class EventLog {
  private readonly store: ExecutionStore;
  private readonly outputDirOf: (sandboxId: string, executionId: string) => string;
  private readonly flushMs: number;
  private readonly retainEvents: number | null;
  private readonly outputBudget: number;
  private readonly outputMaxBytes: number;
  private readonly liveQueueMaxBytes: number;
  private readonly log: (line: string) => void;
  /** The backend's clock (EventLogOptions.now). */
  readonly now: () => number;
  private readonly writers = new Map<string, EventWriter>();
  private readonly subscribers = new RunListeners();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Batches a commit failed for, in order: retried before anything newer is stored. */
  private unsaved: Batch[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = STORE_RETRY_MIN_MS;

  constructor(opts: EventLogOptions) {
    this.store = new ExecutionStore(opts.store);
    this.outputDirOf = opts.outputDir;
    this.flushMs = opts.flushMs ?? DEFAULT_EVENT_FLUSH_MS;
    const retain = opts.retainEvents === undefined ? DEFAULT_EVENT_RETENTION : opts.retainEvents;
    this.retainEvents = retain === null ? null : Math.max(2, retain);
    this.outputBudget = opts.outputBudget ?? EVENT_OUTPUT_BUDGET;
    this.outputMaxBytes = opts.outputMaxBytes ?? DEFAULT_EXECUTION_OUTPUT_MAX_BYTES;
    this.liveQueueMaxBytes = opts.liveQueueMaxBytes ?? LIVE_QUEUE_MAX_BYTES;
    this.log = opts.log ?? (() => {});
    this.now = opts.now ?? Date.now;
  }

  /** The clock's time as an event's `at`. */
  nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  outputDir(sandboxId: string, executionId: string): string {
    return this.outputDirOf(sandboxId, executionId);
  }

  /** Starts the log of a new execution (its output files too). */
  open(executionId: string, sandboxId: string): EventWriter {
    const files = OutputFiles.create(this.outputDir(sandboxId, executionId), this.outputMaxBytes);
    const drafter = new EventDrafter(this.outputBudget, EVENT_OUTPUT_CHUNK_LIMIT, this.outputMaxBytes);
    const writer = new EventWriter(this, executionId, files, drafter, this.liveQueueMaxBytes);
    this.writers.set(executionId, writer);
    return writer;
  }

  /**
   * Commits every execution's drafts, and `work` (e.g. the record's end), in one
   * transaction; then wakes the readers and calls `saved`. When the commit fails (a
   * full disk), nothing is lost: the numbered events and the work wait, in order, and
   * are tried again (backing off) before anything newer. Returns whether it is stored.
   */
  flush(work?: () => void, saved?: () => void): boolean {
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = this.now();
    const batch: Batch = { rows: [], work, saved };
    for (const writer of this.writers.values()) {
      writer.drafter.releaseGaps(now, false);
      if (!writer.drafter.hasDrafts) continue;
      batch.rows.push({ executionId: writer.executionId, rows: writer.drafter.take().map((d) => writer.number(d)) });
    }
    if (batch.rows.length > 0 || work) this.unsaved.push(batch);
    const stored = this.commitUnsaved();
    if ([...this.writers.values()].some((w) => w.drafter.hasPendingGap)) this.schedule();
    return stored;
  }

  /**
   * Commits `work` (an execution's admission) and then what its writer has drafted (its
   * `started` event) in one transaction, now. Nothing is kept to try again: when it
   * throws, the caller says nothing was started and discards the writer.
   */
  commitAdmission(writer: EventWriter, work: () => void): void {
    const rows = writer.drafter.take().map((d) => writer.number(d));
    this.store.transaction(() => {
      work();
      this.insert(writer.executionId, rows);
    });
    this.notify(writer.executionId);
  }

  /** True while some events or an execution's end wait for a commit that failed. */
  get hasUnsaved(): boolean {
    return this.unsaved.length > 0;
  }

  /** Commits every waiting batch in one transaction; on failure keeps them and retries later. */
  private commitUnsaved(): boolean {
    if (this.unsaved.length === 0) return true;
    if (this.store.isClosed) return false;
    const batches = this.unsaved;
    try {
      this.store.transaction(() => {
        for (const b of batches) {
          for (const { executionId, rows } of b.rows) this.insert(executionId, rows);
          b.work?.();
        }
      });
    } catch (err) {
      if (this.retryMs === STORE_RETRY_MIN_MS) {
        this.log(`event log: could not store events (${(err as Error).message}); trying again until it can`);
      }
      this.scheduleRetry();
      return false;
    }
    this.unsaved = [];
    if (this.retryMs !== STORE_RETRY_MIN_MS) this.log("event log: stored what was waiting");
    this.retryMs = STORE_RETRY_MIN_MS;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    for (const b of batches) {
      for (const { executionId } of b.rows) this.notify(executionId);
      b.saved?.();
    }
    return true;
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.stopped) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, STORE_RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.commitUnsaved();
    }, delay);
  }

  /** Appends final events to the log of an execution nobody writes to any more (restart recovery). */
  appendEnding(executionId: string, sandboxId: string, ending: LogEnding, work: () => void): void {
    const last = this.store.lastEvent(executionId);
    const base = this.store.getEventBase(executionId);
    let sequence = last?.sequence ?? base?.through_sequence ?? 0;
    const ends: StreamEnds = {
      stdout: last?.stdout_end ?? base?.stdout_end ?? 0,
      stderr: last?.stderr_end ?? base?.stderr_end ?? 0,
    };
    const at = this.nowIso();
    const rows: EventRow[] = [];
    const row = (type: ExecutionEventType, data: unknown): EventRow => ({
      execution_id: executionId,
      sequence: ++sequence,
      type,
      at,
      data: JSON.stringify(data),
      stdout_end: ends.stdout,
      stderr_end: ends.stderr,
    });
    // Output that reached the files after the last committed batch: readable, but not in events.
    const dir = this.outputDir(sandboxId, executionId);
    for (const stream of OUTPUT_STREAMS) {
      const size = outputSize(dir, stream) ?? 0;
      if (size > ends[stream]) {
        const offset = ends[stream];
        ends[stream] = size;
        rows.push(row("gap", { stream, offset, bytes: size - offset }));
      }
    }
    rows.push(row("exit", ending.exit), row("end", ending.end));
    this.store.transaction(() => {
      this.insert(executionId, rows);
      work();
    });
    this.notify(executionId);
  }

  /**
   * A reader of the output a running execution writes past the cap from now on
   * (live-output.ts), or null when it does not run here (any more).
   */
  followLive(executionId: string): LiveReader | null {
    return this.writers.get(executionId)?.live.follow() ?? null;
  }

  /** Calls `fn` after each committed batch of an execution's events. Returns the unsubscribe. */
  subscribe(executionId: string, fn: () => void): () => void {
    return this.subscribers.watch(executionId, fn);
  }

  read(executionId: string, afterSequence: number, limit: number): EventRow[] {
    return this.store.readEvents(executionId, afterSequence, limit);
  }

  /** What trimming removed, or undefined. */
  base(executionId: string): EventBaseRow | undefined {
    return this.store.getEventBase(executionId);
  }

  /**
   * The last bytes of each stream before `ends`, read from the output files. Where a
   * file stopped at its cap before `ends`, the snapshot ends where the file does.
   */
  snapshot(sandboxId: string, executionId: string, ends: StreamEnds): ResetEventData {
    const dir = this.outputDir(sandboxId, executionId);
    const part = (stream: OutputStream) => {
      const size = outputSize(dir, stream);
      const end = size === null ? ends[stream] : Math.min(ends[stream], size);
      const offset = Math.max(0, end - RESET_SNAPSHOT_LIMIT);
      const bytes = readOutputRange(dir, stream, offset, end - offset) ?? Buffer.alloc(0);
      return { data: bytes.toString("base64"), offset };
    };
    const stdout = part("stdout");
    const stderr = part("stderr");
    return { stdout: stdout.data, stderr: stderr.data, stdout_offset: stdout.offset, stderr_offset: stderr.offset };
  }

  /**
   * A page of events after a sequence, as the wire has them. A cursor older than
   * what is retained gets a `reset` (numbered as the last trimmed event) first.
   */
  page(sandboxId: string, executionId: string, afterSequence: number, limit: number): ExecutionEvent[] {
    const out: ExecutionEvent[] = [];
    let after = afterSequence;
    const base = this.base(executionId);
    if (base && after < base.through_sequence) {
      out.push({
        sequence: base.through_sequence,
        type: "reset",
        at: this.nowIso(),
        data: this.snapshot(sandboxId, executionId, { stdout: base.stdout_end, stderr: base.stderr_end }),
      });
      after = base.through_sequence;
    }
    const rows = this.read(executionId, after, limit - out.length);
    return out.concat(rows.map(toExecutionEvent));
  }

  schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.store.isClosed) return;
      this.flush();
    }, this.flushMs);
  }

  /** Commits what is pending and stops the timers (graceful shutdown). */
  close(): void {
    if (!this.store.isClosed && !this.flush()) {
      this.log(`event log: ${this.unsaved.length} batch(es) could not be stored before shutdown`);
    }
    this.stop();
  }

  /** Drops what is pending, as a crash would (tests). */
  abandon(): void {
    for (const writer of this.writers.values()) writer.files.close({ sync: false });
    this.writers.clear();
    this.unsaved = [];
    this.stop();
  }

  /** @internal the writer is done; called by EventWriter.finish. */
  forget(executionId: string): void {
    this.writers.delete(executionId);
  }

  private stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private insert(executionId: string, rows: EventRow[]): void {
    if (rows.length === 0) return;
    for (const row of rows) this.store.insertEvent(row);
    this.store.setLastEventId(executionId, rows[rows.length - 1]!.sequence);
    if (this.retainEvents !== null) this.store.trimEvents(executionId, this.retainEvents);
  }

  private notify(executionId: string): void {
    this.subscribers.notify(executionId);
  }
}

/** Writes one running execution's events and full output. */
export class EventWriter {
  private sequence = 0;
  /** Its readers of the output past the cap (delivered live, never kept). */
  readonly live: LiveOutput;

  constructor(
    private readonly owner: EventLog,
    readonly executionId: string,
    readonly files: OutputFiles,
    readonly drafter: EventDrafter,
    liveQueueMaxBytes: number,
  ) {
    // Paused for a reader behind: the gaps it waits for are drafted now, not within the second.
    this.live = new LiveOutput(liveQueueMaxBytes, () => {
      this.drafter.releaseGaps(this.owner.now(), true);
      this.owner.schedule();
    });
  }

  /**
   * The first event. Put first even if output was already drafted (a program that
   * failed to start). Committed at once, with `work` (the record's start) in the same
   * transaction; false when that commit failed (the log keeps trying, in order).
   */
  started(data: StartedEventData, work?: () => void): boolean {
    this.drafter.unshift("started", data, data.started_at);
    return this.owner.flush(work);
  }

  /**
   * The first event of a run spawned held, stored with its admission (`work`) in one
   * transaction (EventLog.commitAdmission); throws when that commit fails.
   */
  admittedAndStarted(data: StartedEventData, work: () => void): void {
    this.drafter.unshift("started", data, data.started_at);
    this.owner.commitAdmission(this, work);
  }

  /** An execution that was never admitted: its files are closed and removed, and the log forgets it. */
  discard(): void {
    this.files.close({ sync: false });
    this.owner.forget(this.executionId);
    fs.rmSync(this.files.dir, { recursive: true, force: true });
  }

  /** Some of the stream went past the output file's cap and was not kept. */
  truncated(stream: OutputStream): boolean {
    return this.files.truncated(stream);
  }

  /** An event that is no output (an `egress_denied`), in order with the output around it. */
  note(type: "egress_denied", data: unknown, at: string): void {
    this.drafter.push(type, data, at);
    this.owner.schedule();
  }

  output(stream: OutputStream, chunk: Buffer): void {
    // The file first: once an event covers these bytes, they are readable by offset
    // (up to the file's cap; past it only `output` events, if any, have them).
    const offset = this.files.offered(stream);
    const kept = this.files.append(stream, chunk);
    // Past the cap: to the readers following it live, and to no file or event.
    if (kept < chunk.length && this.live.hasReaders) this.live.offer(stream, offset + kept, chunk.subarray(kept));
    this.drafter.output(stream, chunk, this.owner.nowIso());
    this.owner.schedule();
  }

  /**
   * Ends the log: due gaps, `exit`, `end`; the output files reach the disk; then one
   * transaction stores the events with `work` (the record's end). Returns false when
   * that commit failed: the log keeps trying, and calls `saved` once it is stored.
   */
  finish(ending: LogEnding, work: () => void, saved?: () => void): boolean {
    const at = this.owner.nowIso();
    this.drafter.releaseGaps(this.owner.now(), true);
    this.drafter.push("exit", ending.exit, at);
    this.drafter.push("end", ending.end, at);
    this.live.release();
    try {
      this.files.close({ sync: true });
    } catch {
      // The events and the record matter more than an fsync that failed.
    }
    try {
      return this.owner.flush(work, saved);
    } finally {
      this.owner.forget(this.executionId);
    }
  }

  /** @internal numbers a draft (called by EventLog.flush, in order). */
  number(draft: DraftEvent): EventRow {
    return {
      execution_id: this.executionId,
      sequence: ++this.sequence,
      type: draft.type,
      at: draft.at,
      data: JSON.stringify(draft.data),
      stdout_end: draft.ends.stdout,
      stderr_end: draft.ends.stderr,
    };
  }
}

export function toExecutionEvent(row: EventRow): ExecutionEvent {
  return { sequence: row.sequence, type: row.type as ExecutionEventType, at: row.at, data: JSON.parse(row.data) };
}
