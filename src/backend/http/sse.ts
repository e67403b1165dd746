// Serving an execution's event log as Server-Sent Events: replay after a cursor,
// then follow as batches are committed, until the `end` event. Each frame is
// `id: N\nevent: TYPE\ndata: JSON\n\n`, written as soon as it exists; `: ping`
// comments keep idle connections open. A cursor older than what the log retains
// gets a `reset` first. Stream faults (cut after N frames, cut inside a frame,
// force a `reset`) are applied here.

import type { ServerResponse } from "node:http";
import { EVENT_OUTPUT_CHUNK_LIMIT, type ExecutionEventType, type GapEventData } from "../../protocol/types.js";
import type { EventLog, EventRow, LiveReader } from "../executions/index.js";
import type { EventShaper, StreamFault } from "./faults.js";
import { parseWholeNumber, type Reply } from "./replies.js";

export const DEFAULT_SSE_PING_MS = 15_000;
/** Events read from the log at a time. */
const READ_BATCH = 256;

/**
 * What a handler returns once it has written its answer as a stream itself. The
 * server leaves a response whose headers were sent alone.
 */
export const STREAMED: Reply = { kind: "json", status: 200, body: null };

/**
 * One SSE frame. `data` is one line of JSON (JSON.stringify never writes a newline).
 * Without an id (null): output past the cap, sent live and in no log, leaves a
 * reader's Last-Event-ID where it was.
 */
export function formatSseFrame(id: number | null, type: string, data: string): string {
  return `${id === null ? "" : `id: ${id}\n`}event: ${type}\ndata: ${data}\n\n`;
}

export const SSE_PING = ": ping\n\n";

/**
 * The cursor of a stream request: the Last-Event-ID header wins over `?after=` (a
 * reconnecting EventSource sends the header with its original URL). Null when malformed.
 */
export function parseStreamCursor(lastEventId: string | undefined, after: string | null): number | null {
  const text = lastEventId !== undefined && lastEventId.trim() !== "" ? lastEventId.trim() : (after ?? "0");
  return parseWholeNumber(text);
}

export interface EventStreamSpec {
  res: ServerResponse;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  events: EventLog;
  sandboxId: string;
  executionId: string;
  /** True once the execution's record is terminal: its log then holds all its events. */
  isFinished: () => boolean;
  /** Events after this sequence are sent. */
  after: number;
  pingMs: number;
  fault: StreamFault | null;
  /** The injected `malformed` fault: one frame with broken JSON, then the end of the response. */
  malformed?: boolean;
  /** Shapes events' data on the way out (faults: `no_exit`, and what an execute fault left). */
  shapeEvent?: EventShaper;
  headers?: Record<string, string>;
}

/** Writes the stream; resolves when it ended (with `end`), was cut, or the client left. */
export async function serveEventStream(spec: EventStreamSpec): Promise<void> {
  const { res, signal, events, executionId } = spec;
  res.writeHead(200, {
    ...spec.headers,
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
  });
  res.flushHeaders();
  if (spec.malformed) {
    const first = events.read(executionId, 0, 1)[0];
    const json = first?.data ?? "{}";
    await write(res, formatSseFrame(first?.sequence ?? 1, first?.type ?? "started", json.slice(0, json.length >> 1)));
    res.end();
    return;
  }

  let dirty = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    dirty = true;
    wake?.();
  };
  const unsubscribe = events.subscribe(executionId, poke);
  // Output past the cap, from now on, is sent live in place of its `gap` (live-output.ts).
  const live = events.followLive(executionId);
  signal.addEventListener("abort", poke);
  const ping = setInterval(() => {
    if (!res.destroyed && !res.writableEnded) res.write(SSE_PING);
  }, spec.pingMs);
  const frames = new FrameWriter(res, signal, spec.fault);
  let cursor = spec.after;
  let forceReset = spec.fault?.kind === "reset";
  try {
    for (;;) {
      if (signal.aborted || res.destroyed) return;
      dirty = false;
      // Read "finished" before the events: once it is true, every event is committed.
      const finished = spec.isFinished();
      const base = events.base(executionId);
      if (base && cursor < base.through_sequence) {
        const snapshot = events.snapshot(spec.sandboxId, executionId, {
          stdout: base.stdout_end,
          stderr: base.stderr_end,
        });
        if (!(await frames.write(base.through_sequence, "reset", JSON.stringify(snapshot), false))) return;
        cursor = base.through_sequence;
        forceReset = false;
      }
      let rows = events.read(executionId, cursor, READ_BATCH);
      const count = rows.length;
      while (rows.length > 0) {
        const row = rows[0]!;
        if (forceReset && isOutput(row.type)) {
          // The injected reset: fold this run of output into a snapshot, as trimming would.
          let n = 1;
          while (n < rows.length && isOutput(rows[n]!.type)) n++;
          const last = rows[n - 1]!;
          const snapshot = events.snapshot(spec.sandboxId, executionId, {
            stdout: last.stdout_end,
            stderr: last.stderr_end,
          });
          forceReset = false;
          if (!(await frames.write(last.sequence, "reset", JSON.stringify(snapshot), false))) return;
          cursor = last.sequence;
          rows = rows.slice(n);
          continue;
        }
        const isEnd = row.type === "end";
        if (live !== null && row.type === "gap") {
          const gap = JSON.parse(row.data) as GapEventData & { kept?: boolean };
          if (gap.kept === false) {
            if (!(await sendLive(frames, live, row.sequence, gap))) return;
            cursor = row.sequence;
            rows = rows.slice(1);
            continue;
          }
        }
        if (!(await frames.write(row.sequence, row.type, frameData(row, spec.shapeEvent), isEnd))) return;
        cursor = row.sequence;
        if (isEnd) return;
        rows = rows.slice(1);
      }
      if (count === READ_BATCH) continue;
      // A finished execution whose log has no `end` (it predates event logs): nothing more will come.
      if (finished) return;
      if (!dirty) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (dirty || signal.aborted) resolve();
        });
        wake = null;
      }
    }
  } finally {
    clearInterval(ping);
    unsubscribe();
    live?.close();
    signal.removeEventListener("abort", poke);
    if (!res.destroyed && !res.writableEnded) res.end();
  }
}

/**
 * A `gap` of bytes past the cap, for a reader that followed them live: what it holds
 * of them as `output` events without an id (`kept: false` in their data), and a `gap`
 * with `kept: false` for each part it does not hold. The gap's id goes on its last
 * frame only when that frame is a gap: after a reconnection the range comes again as
 * a gap, and the reader skips what it already has by offset.
 */
async function sendLive(frames: FrameWriter, live: LiveReader, sequence: number, gap: GapEventData): Promise<boolean> {
  const end = gap.offset + gap.bytes;
  const pieces = live.take(gap.stream, gap.offset, gap.bytes);
  let at = gap.offset;
  const hole = (to: number) =>
    frames.write(
      to === end ? sequence : null,
      "gap",
      JSON.stringify({ stream: gap.stream, offset: at, bytes: to - at, kept: false }),
      false,
    );
  for (const piece of pieces) {
    if (piece.offset > at && !(await hole(piece.offset))) return false;
    for (let i = 0; i < piece.bytes.length; i += EVENT_OUTPUT_CHUNK_LIMIT) {
      const bytes = piece.bytes.subarray(i, i + EVENT_OUTPUT_CHUNK_LIMIT);
      const data = { stream: gap.stream, offset: piece.offset + i, data: bytes.toString("base64"), kept: false };
      if (!(await frames.write(null, "output", JSON.stringify(data), false))) return false;
    }
    at = piece.offset + piece.bytes.length;
  }
  return at >= end || hole(end);
}

function isOutput(type: string): boolean {
  return type === "output" || type === "gap";
}

function frameData(row: EventRow, shape: EventStreamSpec["shapeEvent"]): string {
  if (!shape || (row.type !== "exit" && row.type !== "end")) return row.data;
  return JSON.stringify(shape(row.type, JSON.parse(row.data) as Record<string, unknown>));
}

/** Writes frames with back-pressure, counting them for the cut faults. */
class FrameWriter {
  private written = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly signal: AbortSignal,
    private readonly fault: StreamFault | null,
  ) {}

  /** False when the stream must stop (cut, or the client left). */
  async write(id: number | null, type: ExecutionEventType | string, data: string, isLast: boolean): Promise<boolean> {
    if (this.res.destroyed || this.signal.aborted) return false;
    const frame = formatSseFrame(id, type, data);
    this.written++;
    const fault = this.fault;
    if (fault?.kind === "cut_in_frame" && (fault.frame === null ? isLast : this.written === fault.frame)) {
      await write(this.res, frame.slice(0, frame.length >> 1));
      this.res.destroy();
      return false;
    }
    if (fault?.kind === "cut_after" && this.written >= fault.events) {
      await write(this.res, frame);
      this.res.destroy();
      return false;
    }
    if (!this.res.write(frame)) await drained(this.res, this.signal);
    return true;
  }
}

/** Writes and waits until the bytes were handed to the socket (before a deliberate cut). */
function write(res: ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    const done = () => {
      res.off("close", done);
      resolve();
    };
    res.on("close", done);
    res.write(text, done);
  });
}

function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
    signal.addEventListener("abort", done);
  });
}
