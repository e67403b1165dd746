// Running one bounded command (an execution): spawned by its sandbox's driver as a
// process group (drivers/process-group.ts), ended as a whole at its timeout (TERM, then
// KILL after a grace), with bounded output capture.

import { type CommandUsage, type EndReason, RECORD_OUTPUT_LIMIT } from "../../protocol/types.js";
import type { TerminalSize } from "../../platform/pty.js";
import type { RunTerminal } from "../runs/index.js";
import {
  leaderOf,
  type OneShotCommand,
  ProcessGroup,
  type SpawnError,
  sandboxStartFailureMessage,
  spawnFailure,
} from "../drivers/index.js";

export interface RunSpec extends OneShotCommand {
  executionId: string;
  /** Spawned held (the driver must start runs held): the command starts at the handle's proceed(). */
  held?: boolean;
  /** Every chunk of output as it arrives (the event log and the output files). */
  onOutput?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
  /** On a terminal of this size (its output is stdout; stdin must be null). */
  terminal?: TerminalSize;
}

export interface OutputSummary {
  /** The kept tail, UTF-8 with invalid bytes replaced. */
  text: string;
  /** Total bytes the stream produced. */
  bytes: number;
  truncated: boolean;
}

/** `unknown`: the run was ended but how its leader ended is not known (see RunResult.systemError). */
export type RunOutcome = "succeeded" | "failed" | "timed_out" | "cancelled" | "unknown";

/** The leader's exit status could not be learned (the group was ended and given up on). */
export const SYSTEM_ERROR_EXIT_UNKNOWN = "exit_status_unknown";

/**
 * `unknown` with this system error: the sandbox could not be set up and the command
 * never ran (its stderr says why, as "sbx: the sandbox could not be set up: …").
 */
export const SYSTEM_ERROR_SANDBOX_START_FAILED = "sandbox_start_failed";

/**
 * `unknown` with this system error: where the command ran failed under it (a Slurm
 * node: NODE_FAIL, PREEMPTED…); its stderr's last line says which node and how.
 */
export const SYSTEM_ERROR_NODE_FAILED = "node_failed";

export interface RunResult {
  outcome: RunOutcome;
  exitCode: number | null;
  /** Node's signal name ("SIGKILL") when the process was killed by one. */
  signal: string | null;
  /** Why the outcome is `unknown`; null otherwise. */
  systemError: string | null;
  /** Why the command ended beyond its exit: `out_of_memory` (its sandbox's memory limit), else null. */
  endReason: EndReason | null;
  /** What the command used (docs/operations.md); null: it never started. */
  usage: CommandUsage | null;
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
  /** A run spawned held starts its command; its timeout counts from here. */
  proceed(): void;
  /** A run spawned held that must not start (its admission could not be stored): ended unreported. */
  discard(): void;
  /** The run's terminal while it runs on one; null otherwise. */
  readonly terminal: RunTerminal | null;
  /**
   * Stops reading the command's output (its pipes fill and its writes wait) until
   * resumeOutput(): a reader of its output past the cap is behind (live-output.ts). A
   * no-op on a terminal, and once the run is being ended (its output then flows again).
   */
  pauseOutput(): void;
  resumeOutput(): void;
}

export interface ExecutionRunnerOptions {
  /** Between SIGTERM and SIGKILL to the group. Default 5 s. */
  killGraceMs?: number;
  /** Bytes of each stream kept for the record. Default RECORD_OUTPUT_LIMIT. */
  outputLimit?: number;
  /** The clock a run's start and end are read from. */
  now?: () => number;
}

export const DEFAULT_KILL_GRACE_MS = 5000;
/** Starts executions on their sandbox's driver. */
export class ExecutionRunner {
  /** Between SIGTERM and SIGKILL to a run being ended. */
  readonly killGraceMs: number;
  private readonly outputLimit: number;
  private readonly now: () => number;

  constructor(opts: ExecutionRunnerOptions = {}) {
    this.killGraceMs = opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.outputLimit = opts.outputLimit ?? RECORD_OUTPUT_LIMIT;
    this.now = opts.now ?? Date.now;
  }

  start(spec: RunSpec): RunHandle {
    return new LocalRun(spec, this.killGraceMs, this.outputLimit, this.now);
  }
}

class LocalRun implements RunHandle {
  readonly startedAt: Date;
  readonly done: Promise<RunResult>;

  private resolveDone!: (result: RunResult) => void;
  private readonly group = new ProcessGroup();
  private readonly onOutput: (stream: "stdout" | "stderr", chunk: Buffer) => void;
  private readonly stdout: OutputTail;
  private readonly stderr: OutputTail;
  private readonly killGraceMs: number;
  private exit: { code: number | null; signal: string | null } | null = null;
  /** Why the sandbox could not be set up (the command never ran), or null. */
  private startFailure: string | null = null;
  private ending: "timed_out" | "cancelled" | null = null;
  private settled = false;
  /** pauseOutput() holds the command's output back. */
  private outputPaused = false;
  /** The timeout, until the run proceeds (then its timer is armed). */
  private timeoutMs: number | null = null;

  constructor(
    spec: RunSpec,
    killGraceMs: number,
    outputLimit: number,
    private readonly now: () => number,
  ) {
    this.startedAt = new Date(now());
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    this.killGraceMs = killGraceMs;
    this.stdout = new OutputTail(outputLimit);
    this.stderr = new OutputTail(outputLimit);
    this.onOutput = spec.onOutput ?? (() => {});
    const started = this.group.spawn({
      ...leaderOf(spec),
      ...(spec.held === true && { held: true }),
      ...(spec.terminal !== undefined && { terminal: spec.terminal }),
      onOutput: (stream, chunk) => {
        (stream === "stdout" ? this.stdout : this.stderr).push(chunk);
        this.onOutput(stream, chunk);
      },
      onSpawnError: (program, err) => this.failToStart(program, err),
      // The outcome is the leader's; background jobs holding the pipes do not keep the run open.
      onExit: (code, signal, startFailure) => {
        this.exit = { code, signal };
        if (startFailure !== null) this.notSetUp(startFailure);
      },
      onEnd: (code, signal, startFailure) => {
        this.exit ??= { code, signal };
        if (startFailure !== null) this.notSetUp(startFailure);
        this.finish();
      },
    });
    if (!started) return;
    if (spec.stdin) this.group.child?.stdin?.end(spec.stdin);
    this.timeoutMs = spec.timeoutMs;
    if (spec.held !== true) this.proceed();
  }

  proceed(): void {
    const timeoutMs = this.timeoutMs;
    if (timeoutMs === null || this.settled) return;
    this.timeoutMs = null;
    this.group.proceed();
    this.group.later(timeoutMs, () => this.end("timed_out"));
  }

  discard(): void {
    if (this.settled) return;
    this.settled = true;
    this.group.release();
  }

  get pgid(): number | null {
    return this.group.pgid;
  }

  get terminal(): RunTerminal | null {
    const control = this.group.terminal;
    const input = this.group.child?.stdin;
    if (control === null || !input || this.settled) return null;
    return { input, resize: (size) => control.resize(size) };
  }

  get pgidStartTime(): string | null {
    return this.group.pgidStartTime;
  }

  cancel(): void {
    this.end("cancelled");
  }

  pauseOutput(): void {
    if (this.settled || this.ending !== null) return;
    this.outputPaused = true;
    for (const pipe of this.outputPipes()) pipe.pause();
  }

  resumeOutput(): void {
    if (!this.outputPaused) return;
    this.outputPaused = false;
    for (const pipe of this.outputPipes()) pipe.resume();
  }

  private outputPipes(): NodeJS.ReadableStream[] {
    const child = this.group.child;
    if (!child || this.group.terminal !== null) return [];
    return [child.stdout, child.stderr].filter((p): p is NonNullable<typeof p> => p !== null);
  }

  abandon(): void {
    if (this.settled) return;
    this.settled = true;
    this.group.abandon();
  }

  private end(reason: "timed_out" | "cancelled"): void {
    // Once the leader exited, the outcome is its exit; only the linger is left.
    if (this.settled || this.ending !== null || this.pgid === null || this.exit !== null) return;
    this.ending = reason;
    // A run being ended is never held back by a reader: its output flows until it is gone.
    this.resumeOutput();
    this.group.terminate(this.killGraceMs, () => this.finish());
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    const notSetUp = this.startFailure !== null;
    const interrupted = !notSetUp && this.group.interrupted !== null;
    const code = notSetUp || interrupted ? null : (this.exit?.code ?? null);
    const signal = notSetUp || interrupted ? null : (this.exit?.signal ?? null);
    // A terminal outcome other than unknown always carries exit_code or signal (docs/protocol.md).
    const known = code !== null || signal !== null;
    const outcome: RunOutcome = !known ? "unknown" : (this.ending ?? (code === 0 ? "succeeded" : "failed"));
    this.group.releaseThenReport(this.ending !== null, () =>
      this.resolveDone({
        outcome,
        exitCode: code,
        signal,
        systemError: notSetUp
          ? SYSTEM_ERROR_SANDBOX_START_FAILED
          : interrupted
            ? SYSTEM_ERROR_NODE_FAILED
            : known
              ? null
              : SYSTEM_ERROR_EXIT_UNKNOWN,
        endReason: this.ending === null ? this.group.endReason : null,
        usage: notSetUp ? null : this.group.usage,
        stdout: this.stdout.summary(),
        stderr: this.stderr.summary(),
        startedAt: this.startedAt,
        finishedAt: new Date(this.now()),
      }),
    );
  }

  /** The sandbox could not be set up: nothing ran; its stderr says why (once). */
  private notSetUp(cause: string): void {
    if (this.startFailure !== null) return;
    this.startFailure = cause;
    const message = Buffer.from(`${sandboxStartFailureMessage(cause)}\n`);
    this.stderr.push(message);
    this.onOutput("stderr", message);
  }

  /** Nothing ran: answer like a shell would (127 not found, 126 not executable), or the sandbox was not set up. */
  private failToStart(program: string, err: SpawnError): void {
    if (this.settled) return;
    if (err.code === "EBWRAP") {
      this.notSetUp(err.message);
      this.finish();
      return;
    }
    const { exitCode, message } = spawnFailure(program, err);
    this.stderr.push(message);
    this.onOutput("stderr", message);
    this.exit = { code: exitCode, signal: null };
    this.finish();
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
