// Running one bounded command: the driver seam (ExecutionDriver) and its local
// implementation, where each execution is its own process group, ended as a whole
// at its timeout (TERM, then KILL after a grace), with bounded output capture.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import { RECORD_OUTPUT_LIMIT } from "../protocol/types.js";

export interface RunSpec {
  executionId: string;
  /** argv[0] is the program; a shell command arrives here as ["/bin/sh", "-c", command]. */
  argv: string[];
  /** Real directory on this host. */
  cwd: string;
  env: Record<string, string>;
  /** Bytes written once to stdin, then closed; null: stdin is /dev/null. */
  stdin: Buffer | null;
  timeoutMs: number;
  /** Every chunk of output as it arrives (the event log and the output files). */
  onOutput?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
}

export interface OutputSummary {
  /** The kept tail, UTF-8 with invalid bytes replaced. */
  text: string;
  /** Total bytes the stream produced. */
  bytes: number;
  truncated: boolean;
}

export type RunOutcome = "succeeded" | "failed" | "timed_out" | "cancelled";

export interface RunResult {
  outcome: RunOutcome;
  exitCode: number | null;
  /** Node's signal name ("SIGKILL") when the process was killed by one. */
  signal: string | null;
  stdout: OutputSummary;
  stderr: OutputSummary;
  startedAt: Date;
  finishedAt: Date;
}

export interface RunHandle {
  /** The execution's process group, or null when nothing could be started. */
  readonly pgid: number | null;
  /** Start time of the group leader (from /proc), to recognise the group after a restart. */
  readonly pgidStartTime: string | null;
  readonly startedAt: Date;
  /** Resolves once the process group is gone (or abandoned: then never). */
  readonly done: Promise<RunResult>;
  /**
   * Ends the run like a timeout would (TERM, KILL after the grace); outcome `cancelled`,
   * reported once no live process is left in the group.
   */
  cancel(): void;
  /** Forgets the process without ending it: how a crash looks (tests and restart recovery use it). */
  abandon(): void;
}

/** Where executions are placed. Local processes today; a cluster scheduler could slot in. */
export interface ExecutionDriver {
  start(spec: RunSpec): RunHandle;
}

export interface LocalDriverOptions {
  /** Between SIGTERM and SIGKILL to the group. Default 5 s. */
  killGraceMs?: number;
  /** Bytes of each stream kept for the record. Default RECORD_OUTPUT_LIMIT. */
  outputLimit?: number;
}

export const DEFAULT_KILL_GRACE_MS = 5000;
/** After SIGKILL, how long to wait for the pipes to close before giving up on them. */
const CLOSE_FALLBACK_MS = 1000;
/** A group that was ended: how long to wait for its last process to disappear. */
const GROUP_GONE_WAIT_MS = 5000;
const GROUP_GONE_POLL_MS = 20;

export class LocalProcessDriver implements ExecutionDriver {
  private readonly killGraceMs: number;
  private readonly outputLimit: number;

  constructor(opts: LocalDriverOptions = {}) {
    this.killGraceMs = opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.outputLimit = opts.outputLimit ?? RECORD_OUTPUT_LIMIT;
  }

  start(spec: RunSpec): RunHandle {
    return new LocalRun(spec, this.killGraceMs, this.outputLimit);
  }
}

class LocalRun implements RunHandle {
  pgid: number | null = null;
  pgidStartTime: string | null = null;
  readonly startedAt = new Date();
  readonly done: Promise<RunResult>;

  private resolveDone!: (result: RunResult) => void;
  private readonly onOutput: (stream: "stdout" | "stderr", chunk: Buffer) => void;
  private readonly stdout: OutputTail;
  private readonly stderr: OutputTail;
  private readonly killGraceMs: number;
  private child: ChildProcess | null = null;
  private exit: { code: number | null; signal: string | null } | null = null;
  private ending: "timed_out" | "cancelled" | null = null;
  private settled = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(spec: RunSpec, killGraceMs: number, outputLimit: number) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    this.killGraceMs = killGraceMs;
    this.stdout = new OutputTail(outputLimit);
    this.stderr = new OutputTail(outputLimit);
    this.onOutput = spec.onOutput ?? (() => {});
    const program = spec.argv[0] ?? "";

    let child: ChildProcess;
    try {
      child = spawn(program, spec.argv.slice(1), {
        cwd: spec.cwd,
        env: spec.env,
        // Its own process group, so the whole tree can be signalled at once.
        detached: true,
        stdio: [spec.stdin ? "pipe" : "ignore", "pipe", "pipe"],
      });
    } catch (err) {
      this.failToStart(program, err as NodeJS.ErrnoException);
      return;
    }
    this.child = child;
    if (child.pid === undefined) {
      // Spawn failed (e.g. ENOENT); Node reports it on the 'error' event.
      child.on("error", (err: NodeJS.ErrnoException) => this.failToStart(program, err));
      return;
    }
    this.pgid = child.pid;
    this.pgidStartTime = readProcessStartTime(child.pid);
    child.stdout?.on("data", (chunk: Buffer) => {
      this.stdout.push(chunk);
      this.onOutput("stdout", chunk);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr.push(chunk);
      this.onOutput("stderr", chunk);
    });
    if (spec.stdin && child.stdin) {
      child.stdin.on("error", () => {
        // The command need not read its stdin (EPIPE is expected then).
      });
      child.stdin.end(spec.stdin);
    }
    child.on("error", () => {
      // Signalling errors after start; the outcome comes from 'exit'/'close'.
    });
    child.once("exit", (code, signal) => {
      this.exit = { code, signal };
    });
    child.once("close", (code, signal) => {
      this.exit ??= { code, signal };
      this.finish();
    });
    this.later(spec.timeoutMs, () => this.end("timed_out"));
  }

  cancel(): void {
    this.end("cancelled");
  }

  abandon(): void {
    if (this.settled) return;
    this.settled = true;
    this.clearTimers();
    const child = this.child;
    if (child) {
      child.removeAllListeners("close");
      child.removeAllListeners("exit");
      child.stdin?.destroy();
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.unref();
    }
  }

  private end(reason: "timed_out" | "cancelled"): void {
    if (this.settled || this.ending !== null || this.pgid === null) return;
    this.ending = reason;
    const pgid = this.pgid;
    signalProcessGroup(pgid, "SIGTERM");
    this.later(this.killGraceMs, () => {
      signalProcessGroup(pgid, "SIGKILL");
      // A process outside the group may still hold the pipes; do not wait for it forever.
      this.later(CLOSE_FALLBACK_MS, () => this.finish());
    });
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.clearTimers();
    // Whatever is left of the group (background jobs that closed their output) ends with it.
    if (this.pgid !== null) signalProcessGroup(this.pgid, "SIGKILL");
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    const code = this.exit?.code ?? null;
    const signal = this.exit?.signal ?? null;
    const outcome: RunOutcome = this.ending ?? (code === 0 ? "succeeded" : "failed");
    const resolve = () =>
      this.resolveDone({
        outcome,
        exitCode: code,
        signal,
        stdout: this.stdout.summary(),
        stderr: this.stderr.summary(),
        startedAt: this.startedAt,
        finishedAt: new Date(),
      });
    // An ended (cancelled, timed out) run is reported once its group is gone, not when signalled.
    if (this.ending !== null && this.pgid !== null) void waitForGroupGone(this.pgid, GROUP_GONE_WAIT_MS).then(resolve);
    else resolve();
  }

  /** Nothing ran: answer like a shell would (127 not found, 126 not executable). */
  private failToStart(program: string, err: NodeJS.ErrnoException): void {
    if (this.settled) return;
    const notFound = err.code === "ENOENT";
    const why = notFound ? "command not found" : err.code === "EACCES" ? "permission denied" : err.message;
    const message = Buffer.from(`sbx: ${program}: ${why}\n`);
    this.stderr.push(message);
    this.onOutput("stderr", message);
    this.exit = { code: notFound ? 127 : 126, signal: null };
    this.finish();
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

/** Keeps the last `limit` bytes of a stream and counts all of them. */
export class OutputTail {
  private chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    // Drop whole chunks that lie entirely before the last `limit` bytes.
    while (this.chunks.length > 1 && this.kept - this.chunks[0]!.length >= this.limit) {
      this.kept -= this.chunks.shift()!.length;
    }
  }

  summary(): OutputSummary {
    let buf = Buffer.concat(this.chunks);
    if (buf.length > this.limit) buf = buf.subarray(buf.length - this.limit);
    const truncated = this.total > buf.length;
    if (truncated) {
      // Do not start the kept text in the middle of a UTF-8 character.
      let skip = 0;
      while (skip < 3 && skip < buf.length && (buf[skip]! & 0xc0) === 0x80) skip++;
      buf = buf.subarray(skip);
    }
    return { text: buf.toString("utf8"), bytes: this.total, truncated };
  }
}

/** Sends a signal to a whole process group; false when the group is gone. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * True when no live process is left in a group. Zombies waiting for a parent that
 * never reaps them (some container init processes) are dead already and do not count.
 */
export function processGroupGone(pgid: number): boolean {
  if (!signalProcessGroup(pgid, 0)) return true;
  let entries: string[];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // Fields after "(comm)": state is field 3, pgrp is field 5.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z") return false;
  }
  return true;
}

/** Resolves once the group is gone, or after `timeoutMs` (a process stuck in the kernel). */
export async function waitForGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (processGroupGone(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, GROUP_GONE_POLL_MS));
  }
}

/** A process's start time in clock ticks since boot (Linux /proc), or null. */
export function readProcessStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after "(comm)": state is field 3, starttime is field 22.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Ends a process group left by an earlier run of the backend. If the group leader's
 * pid now belongs to another process (it started at another time), the group is
 * not ours any more and is left alone.
 */
export function endLostProcessGroup(pgid: number, leaderStartTime: string | null): "killed" | "gone" | "not_ours" {
  const now = readProcessStartTime(pgid);
  if (now !== null && leaderStartTime !== null && now !== leaderStartTime) return "not_ours";
  return signalProcessGroup(pgid, "SIGKILL") ? "killed" : "gone";
}
