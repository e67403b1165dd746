// An execution an earlier run of the backend started, followed again after a restart
// (docs/drivers.md, "A daemon restart"): its driver's runs outlive the backend and say
// how they ended (SandboxDriver.follow: slurm). The rest of its output is appended to
// its output files as it is found; its timeout still counts from its start; a cancel
// ends it as it would have (TERM, KILL after the grace); its end is stored with its
// real exit code, or as lost saying why.

import fs from "node:fs";
import { type Outcome, RECORD_OUTPUT_LIMIT } from "../../protocol/types.js";
import { type FollowedEnd, type FollowedRun, type StreamBytes, unmeasured } from "../drivers/index.js";
import { OUTPUT_STREAMS, outputFile, outputSize, readOutputRange } from "./output-files.js";
import type { RunHandle } from "./runner.js";
import type { EventLog, LogEnding } from "./events.js";
import type { ExecutionEnd, ExecutionRow, ExecutionStore } from "./store.js";

/** Bytes of each stream an execution's output files hold now. */
export function keptBytes(dir: string): StreamBytes {
  return { stdout: outputSize(dir, "stdout") ?? 0, stderr: outputSize(dir, "stderr") ?? 0 };
}

export interface FollowedSpec {
  row: ExecutionRow;
  run: FollowedRun;
  /** The execution's output directory (its stdout and stderr files). */
  dir: string;
  killGraceMs: number;
  now: () => number;
  /** More output reached the files. */
  onOutput: () => void;
}

/** How a followed execution ended, as the record and its log store it. */
export interface FollowedResult {
  end: ExecutionEnd;
  /** What the record's `recovery` says. */
  recovery: string;
}

/** A followed run as the live runs handle it (RunHandle: cancel, abandon). */
export class FollowedHandle implements Pick<RunHandle, "cancel" | "abandon" | "terminal"> {
  readonly pgid: number | null;
  readonly pgidStartTime: string | null;
  readonly startedAt: Date;
  readonly done: Promise<FollowedResult>;
  readonly terminal = null;
  private ending: "cancelled" | "timed_out" | null;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly spec: FollowedSpec) {
    const { row, run } = spec;
    this.pgid = row.pgid;
    this.pgidStartTime = row.pgid_start_time;
    this.startedAt = new Date(row.started_at ?? row.created_at);
    this.ending = row.cancel_requested === 1 ? "cancelled" : null;
    run.onOutput((stream, chunk) => {
      fs.appendFileSync(outputFile(spec.dir, stream), chunk);
      spec.onOutput();
    });
    const left = row.timeout_ms - (spec.now() - this.startedAt.getTime());
    this.later(Math.max(0, left), () => this.end("timed_out"));
    if (this.ending === "cancelled") this.end("cancelled");
    this.done = run.ended.then((end) => {
      this.clear();
      return this.result(end);
    });
  }

  cancel(): void {
    this.end("cancelled");
  }

  /** Cancels it; answers `settled` (its end stored). */
  cancelUntil<T>(settled: T): T {
    this.cancel();
    return settled;
  }

  /** Stops following it, as a crash would; `then` wakes its waiters. */
  abandon(then?: () => void): void {
    this.clear();
    this.spec.run.stop();
    then?.();
  }

  private end(why: "cancelled" | "timed_out"): void {
    if (this.ending !== null && this.ending !== why && why === "timed_out") return;
    this.ending ??= why;
    this.spec.run.signal("SIGTERM");
    this.later(this.spec.killGraceMs, () => this.spec.run.signal("SIGKILL"));
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private clear(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private result(followed: FollowedEnd): FollowedResult {
    const finished = this.spec.now();
    const lost = followed.lost !== null;
    const known = followed.code !== null || followed.signal !== null;
    const outcome: Outcome =
      lost || !known ? "unknown" : (this.ending ?? (followed.code === 0 ? "succeeded" : "failed"));
    const [stdout, stderr] = OUTPUT_STREAMS.map((s) => recordTail(this.spec.dir, s)) as [Tail, Tail];
    return {
      end: {
        outcome,
        exit_code: followed.code,
        signal: followed.signal,
        system_error: outcome === "unknown" ? "exec_stream_lost" : null,
        end_reason: null,
        usage: outcome === "unknown" ? null : unmeasured("a step on a Slurm node is not measured yet"),
        record_pending: false,
        stdout: stdout.text,
        stderr: stderr.text,
        stdout_bytes: stdout.bytes,
        stderr_bytes: stderr.bytes,
        stdout_truncated: stdout.truncated,
        stderr_truncated: stderr.truncated,
        finished_at: new Date(finished).toISOString(),
        duration_ms: finished - this.startedAt.getTime(),
      },
      recovery:
        followed.lost ??
        "followed again after a restart of the backend: its run outlived it, and its end is the command's own",
    };
  }
}

/** Stores a followed execution's end: its log's last events, the record's end and `recovery`. */
export function storeFollowedEnd(
  events: EventLog,
  store: ExecutionStore,
  row: ExecutionRow,
  result: FollowedResult,
  ending: LogEnding,
): void {
  events.appendEnding(row.execution_id, row.sandbox_id, ending, () => {
    store.finishExecution(row.execution_id, result.end);
    store.noteRecovery(row.execution_id, result.recovery);
  });
}

interface Tail {
  text: string;
  bytes: number;
  truncated: boolean;
}

/** The record's tail of a stream, read from its output file. */
function recordTail(dir: string, stream: "stdout" | "stderr"): Tail {
  const bytes = outputSize(dir, stream) ?? 0;
  const from = Math.max(0, bytes - RECORD_OUTPUT_LIMIT);
  let buf = readOutputRange(dir, stream, from, bytes - from) ?? Buffer.alloc(0);
  // Never start the kept text in the middle of a UTF-8 character.
  let skip = 0;
  while (from > 0 && skip < 3 && skip < buf.length && (buf[skip]! & 0xc0) === 0x80) skip++;
  buf = buf.subarray(skip);
  return { text: buf.toString("utf8"), bytes, truncated: from > 0 };
}
