// One supervised process's supervision, from its first start until it ended for
// good (docs/protocol.md, "Supervised processes"): it runs the process generation
// after generation under its restart policy (restart.ts), writes its output
// to rotated log files (logs.ts), ends it at its timeout or when stopped
// (TERM to the group, KILL after a grace), and keeps its row in backend.db up to
// date. The live ones, restart recovery and shutdown are supervisor.ts.
//
// Outcomes: `pending` until the process ended for good; then the last run's
// verdict (`succeeded` for exit 0, else `failed`, also when a signal killed it),
// or `cancelled` (stopped by DELETE, or by the daemon shutting down),
// `timed_out` (timeout_ms, counted over the whole life from the first start), or
// `unknown` (lost with the daemon). A signal sent through the API is delivered and
// the resulting end is treated like any other (on-failure/always may restart it).

import path from "node:path";
import {
  ErrorCodes,
  type Outcome,
  type ProcessEndReason,
  type ProcessRunSummary,
  type ProcessStream,
  type RestartPolicy,
} from "../../protocol/types.js";
import type { ProcessPatch, ProcessRow, ProcessStore } from "./store.js";
import { commandEnvironment, type SandboxDriver, type SandboxPlacement, bootId } from "../drivers/index.js";
import type { ProcessLogStream } from "./logs.js";
import { RestartTracker } from "./restart.js";
import { ProcessRun, type RunExit, STDIN_PENDING_LIMIT, StdinError } from "./run.js";
import { Refusal } from "../refusal.js";
import { confineToWorkspace } from "../sandboxes/index.js";
import type { EndReason, LiveRun, RunTerminal } from "../runs/index.js";
import type { TerminalSize } from "../../platform/pty.js";

const STREAMS: readonly ProcessStream[] = ["stdout", "stderr"];

/** Why a supervisor ends its process (first one wins). */
type StopIntent = "stop" | "timeout" | "shutdown";

const INTENT_END: Record<StopIntent, { outcome: Outcome; reason: ProcessEndReason }> = {
  stop: { outcome: "cancelled", reason: "stopped" },
  timeout: { outcome: "timed_out", reason: "timed_out" },
  shutdown: { outcome: "cancelled", reason: "backend_shutdown" },
};

export interface SupervisionDeps {
  store: ProcessStore;
  killGraceMs: number;
  /** The clock: record times, the back-off's end, the life's deadline. */
  now: () => number;
  /** The backend's boot (LiveRuns.boot): each run records the boot it was started in. */
  boot: string;
  stableUptimeMs: number;
  log: (line: string) => void;
  onEnded: (s: SupervisedProcess) => void;
}

/** How long processes of a sandbox removed with force get between TERM and KILL. */
export const SANDBOX_REMOVED_STOP_GRACE_MS = 2000;

/** One process's supervision, from its first start until it ended for good: a live run of the backend (LiveRuns). */
export class SupervisedProcess implements LiveRun {
  readonly logs: Record<ProcessStream, ProcessLogStream>;
  /** Resolves once the process ended for good (or was abandoned). */
  readonly ended: Promise<void>;

  private row: ProcessRow;
  private readonly restart: RestartPolicy;
  private readonly tracker: RestartTracker;
  private readonly argv: string[];
  private run: ProcessRun | null = null;
  /** Why the last run's sandbox could not be set up, or null. */
  private lastStartFailure: string | null = null;
  private intent: StopIntent | null = null;
  private backoffTimer: NodeJS.Timeout | undefined;
  /** Attached terminals: told of output and of every change of state. */
  private readonly terminalWatchers = new Set<() => void>();
  /** The window size last asked for: a restarted run's terminal starts at it. */
  private terminalSize: TerminalSize | null = null;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private abandoned = false;
  private resolveEnded!: () => void;
  private readonly writeFailures = new Set<ProcessStream>();

  constructor(
    private readonly deps: SupervisionDeps,
    row: ProcessRow,
    private readonly driver: SandboxDriver,
    private readonly placement: SandboxPlacement,
    private readonly cwd: string,
    logs: Record<ProcessStream, ProcessLogStream>,
  ) {
    this.row = row;
    this.logs = logs;
    this.restart = JSON.parse(row.restart) as RestartPolicy;
    this.tracker = new RestartTracker(this.restart, deps.now, row.restarts_in_window, deps.stableUptimeMs);
    const command = JSON.parse(row.command) as string[] | string;
    this.argv = typeof command === "string" ? ["/bin/sh", "-c", command] : command;
    this.ended = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
  }

  get id(): string {
    return this.row.process_id;
  }

  get current(): ProcessRow {
    return this.row;
  }

  /**
   * Why the current (or last) run's sandbox could not be set up, once that is known:
   * null when its command started (or could not be started for another reason).
   */
  async startFailure(): Promise<string | null> {
    const run = this.run;
    if (run === null) return this.lastStartFailure;
    if (await run.started) return null;
    return (await run.done).startFailure;
  }

  get sandboxId(): string {
    return this.row.sandbox_id;
  }

  /** Stopped for good with its sandbox (a short grace), or with the backend (the kill grace). */
  end(reason: EndReason): Promise<void> {
    return reason === "shutdown"
      ? this.requestStop("shutdown", this.deps.killGraceMs)
      : this.requestStop("stop", SANDBOX_REMOVED_STOP_GRACE_MS);
  }

  /** Starts a run (a new generation when `patch` raises `restarts`). */
  startRun(patch: ProcessPatch = {}): void {
    const generation = patch.restarts ?? this.row.restarts;
    // Checked for each run: the working directory may have become a symlink out of the
    // workspace (or, for an image's WorkingDir, out of the sandbox's root).
    const root = this.placement.rootDir ?? null;
    const inRoot = root !== null && !path.relative(root, this.cwd).startsWith("..");
    const place = confineToWorkspace(inRoot ? root : this.placement.workspaceDir, this.cwd);
    const cwd = place.cwd ?? this.cwd;
    const run = new ProcessRun({
      driver: this.driver,
      placement: this.placement,
      argv: this.argv,
      cwd,
      ...(place.problem === "outside" && {
        cwdProblem: `working directory ${this.row.working_dir} leads outside ${inRoot ? "the sandbox's root" : "/workspace"}; not started`,
      }),
      env: commandEnvironment(
        this.driver,
        this.placement,
        { kind: "process", id: this.row.process_id, generation },
        cwd,
        JSON.parse(this.row.env) as Record<string, string>,
      ),
      stdin: this.row.stdin_enabled === 1,
      ...(this.row.tty !== null && { terminal: this.terminalSize ?? (JSON.parse(this.row.tty) as TerminalSize) }),
      onOutput: (stream, chunk) => this.output(stream, chunk),
      onCommandPid: (pid) => {
        if (this.run === run && !run.ended) this.patch({ os_pid: pid, pgid_start_time: run.pgidStartTime });
      },
      now: this.deps.now,
    });
    this.run = run;
    this.tracker.runStarted();
    const startedAt = run.startedAt.toISOString();
    this.patch({
      ...patch,
      state: "running",
      // The command's pid (in a live sandbox learnt a moment later, onCommandPid above).
      os_pid: run.commandPid,
      pgid_start_time: run.pgidStartTime,
      boot_id: run.pgid === null ? null : bootId(),
      daemon_boot: this.deps.boot,
      started_at: startedAt,
      first_started_at: this.row.first_started_at ?? startedAt,
      next_restart_at: null,
    });
    this.armDeadline();
    void run.done.then((exit) => this.runEnded(run, exit));
  }

  /** Ends the process for good: TERM to the group, KILL after `graceMs`. Resolves once it ended. */
  requestStop(intent: StopIntent, graceMs: number): Promise<void> {
    if (this.row.state === "exited" || this.abandoned) return this.ended;
    this.intent ??= intent;
    if (intent === "stop" && this.row.stop_requested === 0) this.patch({ stop_requested: 1 });
    const run = this.run;
    if (run && !run.ended) {
      if (this.row.state !== "stopping") this.patch({ state: "stopping" });
      run.terminate(graceMs);
    } else if (run === null) {
      // In backoff: nothing runs; end now with the last run's exit.
      this.finish(this.intentEnd(), parseLastRun(this.row));
    }
    return this.ended;
  }

  /** The current run (its generation): the restarts so far. */
  get generation(): number {
    return this.row.restarts;
  }

  /** The backend boot the current (or last) run was started in. */
  get boot(): string | null {
    return this.row.daemon_boot;
  }

  /** Delivers a signal to the current run's group. Refused (process_not_running) when no run is alive. */
  signal(signal: NodeJS.Signals): { generation: number; osPid: number } {
    const run = this.run;
    if (run === null || run.ended || run.pgid === null || !run.signal(signal)) throw notRunning(this.row);
    return { generation: this.row.restarts, osPid: run.pgid };
  }

  /** Writes to the current run's stdin (and closes it on `eof`). Refused when it cannot take the bytes now. */
  async writeStdin(data: Buffer, eof: boolean): Promise<{ generation: number; bytes: number }> {
    if (this.row.stdin_enabled !== 1) throw stdinNotEnabled(this.row.process_id);
    const run = this.run;
    const generation = this.row.restarts;
    if (run === null || run.ended || this.row.state !== "running") throw notRunning(this.row);
    try {
      await run.writeStdin(data);
    } catch (err) {
      if (err instanceof StdinError && err.code === "closed") {
        throw new Refusal(
          ErrorCodes.stdinClosed,
          "stdin of this run was closed (eof); it opens again only on a restart",
          { process_id: this.row.process_id, generation },
        );
      }
      if (err instanceof StdinError && err.code === "busy") {
        throw new Refusal(
          ErrorCodes.stdinBusy,
          `${err.message} (at most ${STDIN_PENDING_LIMIT} bytes may wait for the command to read them)`,
          { process_id: this.row.process_id, generation, pending_bytes: run.stdinPending, retry_after_ms: 1000 },
        );
      }
      throw notRunning(this.row);
    }
    if (eof) run.endStdin();
    return { generation, bytes: data.length };
  }

  /** Forgets the process without ending it, as a crash would. */
  abandon(): void {
    this.abandoned = true;
    this.run?.abandon();
    this.clearTimers();
    for (const s of STREAMS) this.logs[s].closeFile();
    this.resolveEnded();
  }

  /** Ends the process for good at restart recovery without running it again. */
  endLost(lastRun: ProcessRunSummary | null): void {
    this.finish({ outcome: "unknown", reason: "backend_lost" }, lastRun, { keepExit: false });
  }

  private output(stream: ProcessStream, chunk: Buffer): void {
    try {
      this.logs[stream].append(chunk);
    } catch (err) {
      if (!this.writeFailures.has(stream)) {
        this.writeFailures.add(stream);
        this.deps.log(`process ${this.id}: could not write its ${stream} log: ${(err as Error).message}`);
      }
    }
    this.tellTerminals();
  }

  /** Calls `listener` on output and on every change of state (a run ended, a new one, the end). */
  watchTerminal(listener: () => void): () => void {
    this.terminalWatchers.add(listener);
    return () => this.terminalWatchers.delete(listener);
  }

  /** The current run's terminal (input, resize); null between runs and once ended. */
  terminal(): RunTerminal | null {
    const run = this.run;
    const terminal = run === null || run.ended ? null : run.terminal;
    if (terminal === null) return null;
    return {
      input: terminal.input,
      resize: (size) => {
        this.terminalSize = size;
        terminal.resize(size);
      },
    };
  }

  private tellTerminals(): void {
    for (const l of [...this.terminalWatchers]) l();
  }

  private runEnded(run: ProcessRun, exit: RunExit): void {
    if (this.run !== run || this.abandoned || this.deps.store.isClosed) return;
    this.run = null;
    this.lastStartFailure = exit.startFailure;
    if (exit.startFailure !== null && this.intent === null) {
      // Its sandbox could not be set up: the command never ran; starting it again would fail alike.
      const lastRun: ProcessRunSummary = {
        generation: this.row.restarts,
        outcome: "unknown",
        exit_code: null,
        signal: null,
        started_at: exit.startedAt.toISOString(),
        ended_at: exit.endedAt.toISOString(),
      };
      this.finish({ outcome: "unknown", reason: "start_failed" }, lastRun);
      return;
    }
    const verdict = exit.exitCode === 0 ? "succeeded" : "failed";
    const lastRun: ProcessRunSummary = {
      generation: this.row.restarts,
      outcome: verdict,
      exit_code: exit.exitCode,
      signal: exit.signal,
      ...(exit.endReason !== null && { end_reason: exit.endReason }),
      usage: exit.usage,
      started_at: exit.startedAt.toISOString(),
      ended_at: exit.endedAt.toISOString(),
    };
    if (this.intent !== null) {
      this.finish(this.intentEnd(), lastRun);
      return;
    }
    const decision = this.tracker.runEnded(verdict);
    if (!decision.restart) {
      // Its memory limit ended it (and its policy does not start it again): said as such.
      const reason =
        decision.reason === "exited" && exit.endReason === "out_of_memory" ? "out_of_memory" : decision.reason;
      this.finish({ outcome: verdict, reason }, lastRun);
      return;
    }
    this.patch({
      state: "backoff",
      os_pid: null,
      pgid_start_time: null,
      last_run: JSON.stringify(lastRun),
      restarts_in_window: decision.restartsInWindow,
      next_restart_at: new Date(this.deps.now() + decision.delayMs).toISOString(),
      ...this.logEnds(),
    });
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = undefined;
      if (this.intent === null && !this.abandoned) this.startRun({ restarts: this.row.restarts + 1 });
    }, decision.delayMs);
  }

  private intentEnd(): { outcome: Outcome; reason: ProcessEndReason } {
    return INTENT_END[this.intent ?? "stop"];
  }

  private finish(
    how: { outcome: Outcome; reason: ProcessEndReason },
    lastRun: ProcessRunSummary | null,
    opts: { keepExit: boolean } = { keepExit: true },
  ): void {
    if (this.row.state === "exited") return;
    this.clearTimers();
    for (const s of STREAMS) this.logs[s].seal();
    this.patch({
      state: "exited",
      outcome: how.outcome,
      exit_code: opts.keepExit ? (lastRun?.exit_code ?? null) : null,
      signal: opts.keepExit ? (lastRun?.signal ?? null) : null,
      end_reason: how.reason,
      os_pid: null,
      pgid_start_time: null,
      next_restart_at: null,
      last_run: lastRun === null ? null : JSON.stringify(lastRun),
      ended_at: new Date(this.deps.now()).toISOString(),
      ...this.logEnds(),
    });
    this.resolveEnded();
    this.deps.onEnded(this);
  }

  /** timeout_ms counts from the first start over the whole life. */
  private armDeadline(): void {
    if (this.row.timeout_ms === null || this.deadlineTimer !== undefined || this.row.first_started_at === null) return;
    const at = Date.parse(this.row.first_started_at) + this.row.timeout_ms;
    this.deadlineTimer = setTimeout(
      () => {
        this.deadlineTimer = undefined;
        void this.requestStop("timeout", this.deps.killGraceMs);
      },
      Math.max(0, at - this.deps.now()),
    );
  }

  private logEnds(): ProcessPatch {
    return { stdout_bytes: this.logs.stdout.end, stderr_bytes: this.logs.stderr.end };
  }

  private patch(patch: ProcessPatch): void {
    this.row = { ...this.row, ...patch };
    this.tellTerminals();
    if (this.deps.store.isClosed) return;
    try {
      this.deps.store.transaction(() => this.deps.store.updateProcess(this.row.process_id, patch));
    } catch (err) {
      this.deps.log(`process ${this.id}: could not store its state: ${(err as Error).message}`);
    }
  }

  private clearTimers(): void {
    clearTimeout(this.backoffTimer);
    clearTimeout(this.deadlineTimer);
    this.backoffTimer = undefined;
    this.deadlineTimer = undefined;
  }
}

/** A signal or a stdin write while no run of the process is alive. */
export function notRunning(row: ProcessRow): Refusal {
  return new Refusal(
    ErrorCodes.processNotRunning,
    `process ${row.process_id} has no running run (state ${row.state})`,
    {
      process_id: row.process_id,
      state: row.state,
    },
  );
}

/** A stdin write to a process started without stdin. */
export function stdinNotEnabled(processId: string): Refusal {
  return new Refusal(
    ErrorCodes.stdinNotEnabled,
    "this process was started without stdin: true; its stdin is /dev/null",
    { process_id: processId },
  );
}

/** The run summary a process row keeps (last_run), or null. */
export function parseLastRun(row: ProcessRow): ProcessRunSummary | null {
  return row.last_run === null ? null : (JSON.parse(row.last_run) as ProcessRunSummary);
}
