// Following an execution's event stream to its end: output de-duplicated by byte
// offset, `reset` snapshots replacing what was accumulated, and reconnection (a
// read, so allowed) with Last-Event-ID of the last complete event, within the
// deadline. Never re-sends the POST that started the execution.

import { routePath } from "../protocol/routes.js";
import type { HttpObserved } from "./observed.js";
import type { Requests, SseOpen } from "./http.js";
import { idForKey } from "./key-lookup.js";
import { SseReader, type SseEvent } from "./sse.js";

export type StreamName = "stdout" | "stderr";

/** The last `limit` bytes of a stream, with the logical offset of its end. */
export class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Logical offset just past the last byte accumulated. */
  end = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  append(bytes: Buffer): void {
    this.chunks.push(bytes);
    this.size += bytes.length;
    this.end += bytes.length;
    if (this.size > this.limit * 2) this.compact();
  }

  /** Replaces everything with a snapshot starting at offset. */
  replace(bytes: Buffer, offset: number): void {
    this.chunks = [bytes];
    this.size = bytes.length;
    this.end = offset + bytes.length;
    this.truncated = offset > 0;
    this.compact();
  }

  private compact(): void {
    if (this.size <= this.limit) return;
    const all = Buffer.concat(this.chunks);
    this.chunks = [all.subarray(all.length - this.limit)];
    this.size = this.limit;
    this.truncated = true;
  }

  bytes(): Buffer {
    this.compact();
    return Buffer.concat(this.chunks);
  }
}

export interface FollowSinks {
  /**
   * Bytes not seen before, in order; `liveOnly`: past the backend's output cap, sent
   * live to this reader and kept nowhere (`output` with `kept: false`), from `offset`.
   */
  onOutput?(stream: StreamName, bytes: Buffer, liveOnly?: { offset: number }): void;
  /**
   * Bytes the backend did not put into events (read them from the output route);
   * kept: false when it did not keep them at all (past its output cap). What the sink
   * reads it hands to `fill`, in order, so that the receipt's tail stays exact.
   */
  onGap?(
    stream: StreamName,
    offset: number,
    bytes: number,
    kept: boolean,
    fill: (bytes: Buffer) => void,
  ): void | Promise<void>;
  onStarted?(executionId: string): void;
  /** A connection the sandbox's egress policy refused while it ran (an `egress_denied` event's data). */
  onEgressDenied?(denial: Record<string, unknown>): void;
  /** Every complete event (for `logs --json`). */
  onEvent?(event: SseEvent): void;
  onReconnect?(attempt: number, lastId: number | null): void;
}

export interface FollowRequest {
  http: Requests;
  sandbox: string;
  executionId: string | null;
  idempotencyKey: string | null;
  /** An already open stream (the answer of the POST), or null to open GET …/stream. */
  first: SseOpen | null;
  /** Resume after this event id (Last-Event-ID). */
  after: number | null;
  /** Epoch ms; Infinity to follow for as long as it takes. */
  deadlineAt: number;
  signal: AbortSignal;
  sinks: FollowSinks;
  /** Return as soon as the `started` event arrived (detach). */
  stopAfterStarted?: boolean;
  /**
   * Aborted when whatever reads the output has gone away (sbx's stdout closed): stop
   * following at once, as after `started` (the execution keeps running).
   */
  readerGone?: AbortSignal;
  outputLimit?: number;
  /**
   * Called when the backend refuses connections (nothing listens): may start it again
   * (the local daemon, whose recovery then ends the execution's log). True: try at once.
   */
  revive?: () => Promise<boolean>;
}

/** Times a follow asks for the backend to be started again. */
const REVIVE_LIMIT = 2;

/** refused: the backend answered the stream read with a 4xx (unknown execution, bad cursor). */
export type FollowEnd = "end" | "started" | "deadline" | "interrupted" | "dropped" | "refused";

export interface FollowResult {
  executionId: string | null;
  /** The backend boot the `started` event named (the execution's handle), or null. */
  boot: string | null;
  exit: Record<string, unknown> | null;
  endState: { state: string; reason?: string } | null;
  how: FollowEnd;
  stdout: OutputTail;
  stderr: OutputTail;
  lastId: number | null;
  reconnects: number;
  /** A non-stream answer while reconnecting that ended the attempt (e.g. 404), for the record. */
  lastProblem: string | null;
}

const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 2_000;

function streamPath(sandbox: string, eid: string): string {
  return routePath("executions.stream", { id: sandbox, eid });
}

/** The id the key created; null when there is none yet; the observation when the read failed. */
async function lookupByKey(
  http: Requests,
  sandbox: string,
  key: string,
  deadlineMs: number,
  startBackend: boolean,
): Promise<string | HttpObserved | null> {
  const obs = await http.send({
    method: "GET",
    path: routePath("executions.list", { id: sandbox }, { idempotency_key: key, limit: 1 }),
    deadlineMs,
    startBackend,
  });
  if (obs.kind !== "answer") return obs;
  return idForKey(obs, "executions", key);
}

function errorCodeOf(body: string): string {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    return typeof code === "string" ? ` ${code}` : "";
  } catch {
    return "";
  }
}

function describe(obs: HttpObserved): string {
  if (obs.kind === "answer") return `HTTP ${obs.status}`;
  if (obs.kind === "transport") return obs.code;
  return "deadline";
}

export async function followExecution(req: FollowRequest): Promise<FollowResult> {
  const limit = req.outputLimit ?? 1024 * 1024;
  const result: FollowResult = {
    executionId: req.executionId,
    boot: null,
    exit: null,
    endState: null,
    how: "dropped",
    stdout: new OutputTail(limit),
    stderr: new OutputTail(limit),
    lastId: req.after,
    reconnects: 0,
    lastProblem: null,
  };
  const reader = new SseReader(req.after);

  const handle = createEventHandler(result, req.sinks, req.stopAfterStarted === true);

  let current: SseOpen | null = req.first;
  let attempt = 0;
  let revived = 0;
  // Nothing listens where the backend was: start it again, once or twice, instead of
  // knocking until the deadline.
  const revive = async (obs: HttpObserved): Promise<boolean> => {
    if (!req.revive || revived >= REVIVE_LIMIT || obs.kind !== "transport" || obs.sent) return false;
    revived++;
    return req.revive().catch(() => false);
  };
  // A reader gone while the stream waits for its next bytes: stop waiting.
  req.readerGone?.addEventListener("abort", () => current?.cancel(), { once: true });
  const stopFollowing = () => {
    result.how = result.endState ? "end" : "started";
  };
  for (;;) {
    if (req.signal.aborted) {
      result.how = "interrupted";
      break;
    }
    if (req.readerGone?.aborted) {
      stopFollowing();
      break;
    }
    if (current === null) {
      const left = req.deadlineAt - Date.now();
      if (left <= 0) {
        result.how = "dropped";
        break;
      }
      if (attempt > 0) {
        await new Promise((r) =>
          setTimeout(r, Math.min(left, RECONNECT_MIN_MS * 2 ** Math.min(attempt - 1, 4), RECONNECT_MAX_MS)),
        );
      }
      attempt++;
      if (result.executionId === null && req.idempotencyKey !== null) {
        const found = await lookupByKey(
          req.http,
          req.sandbox,
          req.idempotencyKey,
          Math.max(1, Math.min(left, 30_000)),
          req.revive === undefined,
        );
        if (typeof found === "string") result.executionId = found;
        else if (found !== null && (await revive(found))) attempt = 0;
      }
      if (result.executionId === null) {
        result.lastProblem = "no execution id yet";
        continue;
      }
      req.sinks.onReconnect?.(attempt, reader.lastId);
      result.reconnects++;
      const opened = await req.http.openStream({
        method: "GET",
        path: streamPath(req.sandbox, result.executionId),
        lastEventId: reader.lastId,
        ...(Number.isFinite(req.deadlineAt) ? { deadlineMs: Math.max(1, req.deadlineAt - Date.now()) } : {}),
        signal: req.signal,
        // With a revive of its own (exec), a backend that is gone is started there, saying why.
        startBackend: req.revive === undefined,
      });
      if (opened.kind !== "sse") {
        result.lastProblem = describe(opened);
        if (await revive(opened)) {
          attempt = 0;
          continue;
        }
        if (opened.kind === "deadline") {
          result.how = opened.interrupted ? "interrupted" : "deadline";
          break;
        }
        if (opened.kind === "answer" && opened.status >= 400 && opened.status < 500) {
          // Asking again will not change a 404 or an invalid cursor: stop, and say why.
          result.how = "refused";
          result.lastProblem = `HTTP ${opened.status}${errorCodeOf(opened.body)}`;
          break;
        }
        continue;
      }
      current = opened;
    }
    let stop = false;
    try {
      for await (const chunk of current.chunks) {
        for (const ev of reader.feed(chunk)) {
          if ((await handle(ev)) === "stop" || req.readerGone?.aborted) {
            stop = true;
            break;
          }
        }
        if (stop) break;
      }
    } catch {
      // dropped: decided below
    }
    result.lastId = reader.lastId;
    if (stop || req.readerGone?.aborted) {
      current.cancel();
      stopFollowing();
      break;
    }
    if (current.deadlinePassed()) {
      result.how = "deadline";
      break;
    }
    if (current.interrupted()) {
      result.how = "interrupted";
      break;
    }
    // The stream ended or broke without `end`: discard any partial frame and resume.
    current.cancel();
    reader.resetConnection();
    current = null;
  }
  result.lastId = reader.lastId;
  return result;
}

/**
 * Applies events, in order, to what was accumulated: the one place that knows what
 * each event type means for the output. Used for live streams and for event pages.
 */
export function createEventHandler(
  result: Pick<FollowResult, "executionId" | "exit" | "endState" | "stdout" | "stderr"> & { boot?: string | null },
  sinks: FollowSinks,
  stopAfterStarted: boolean,
): (ev: SseEvent) => Promise<"continue" | "stop"> {
  const tails = { stdout: result.stdout, stderr: result.stderr };
  return async (ev) => {
    sinks.onEvent?.(ev);
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(ev.data) as Record<string, unknown>;
    } catch {
      return "continue"; // an undocumented event is ignored, never trusted
    }
    switch (ev.type) {
      case "started":
        if (typeof data.execution_id === "string") {
          result.executionId = data.execution_id;
          if (typeof data.boot === "string") result.boot = data.boot;
          sinks.onStarted?.(data.execution_id);
        }
        return stopAfterStarted ? "stop" : "continue";
      case "output": {
        const stream = data.stream === "stderr" ? "stderr" : "stdout";
        const offset = typeof data.offset === "number" ? data.offset : null;
        const bytes = Buffer.from(typeof data.data === "string" ? data.data : "", "base64");
        const tail = tails[stream];
        if (offset === null || offset + bytes.length <= tail.end) return "continue";
        const fresh = offset >= tail.end ? bytes : bytes.subarray(tail.end - offset);
        if (offset > tail.end) tail.end = offset; // bytes before were never in events
        tail.append(fresh);
        if (data.kept === false) sinks.onOutput?.(stream, fresh, { offset: offset + bytes.length - fresh.length });
        else sinks.onOutput?.(stream, fresh);
        return "continue";
      }
      case "gap": {
        const stream = data.stream === "stderr" ? "stderr" : "stdout";
        const offset = Number(data.offset) || 0;
        const bytes = Number(data.bytes) || 0;
        const tail = tails[stream];
        if (offset + bytes <= tail.end) return "continue"; // seen already (a replay after reconnecting)
        if (offset > tail.end) {
          tail.end = offset;
          tail.truncated = true;
        }
        // Only the part not seen yet; the sink appends what it reads to the tail.
        const from = tail.end;
        await sinks.onGap?.(stream, from, offset + bytes - from, data.kept !== false, (b) => tail.append(b));
        if (tail.end < offset + bytes) {
          tail.end = offset + bytes;
          tail.truncated = true;
        }
        return "continue";
      }
      case "reset": {
        for (const stream of ["stdout", "stderr"] as const) {
          const snap = Buffer.from(typeof data[stream] === "string" ? (data[stream] as string) : "", "base64");
          const start = Number(data[`${stream}_offset`]) || 0;
          const printedTo = tails[stream].end;
          // Bytes between what was shown and where the snapshot starts: read them first.
          if (start > printedTo) await sinks.onGap?.(stream, printedTo, start - printedTo, true, () => undefined);
          tails[stream].replace(snap, start);
          // Show only what was not shown already.
          if (start + snap.length > printedTo) {
            sinks.onOutput?.(stream, snap.subarray(Math.max(0, printedTo - start)));
          }
        }
        return "continue";
      }
      case "egress_denied":
        sinks.onEgressDenied?.(data);
        return "continue";
      case "exit":
        result.exit = data;
        return "continue";
      case "end":
        result.endState = {
          state: String(data.state ?? ""),
          ...(typeof data.reason === "string" ? { reason: data.reason } : {}),
        };
        return "stop";
      default:
        return "continue";
    }
  };
}
