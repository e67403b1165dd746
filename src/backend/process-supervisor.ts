// Supervised processes: one Supervisor per process runs it generation after
// generation under its restart policy (process-restart.ts), writes its output to
// rotated log files (process-logs.ts), ends it at its timeout or when stopped
// (TERM to the group, KILL after a grace), and keeps its row in backend.db up to
// date. ProcessSupervisor holds the live ones and does restart recovery (what an
// earlier run of the daemon left running is marked, its group ended, and processes
// whose policy starts them again start as a new generation) and shutdown.
//
// Outcomes: `pending` until the process ended for good; then the last run's
// verdict (`succeeded` for exit 0, else `failed`, also when a signal killed it),
// or `cancelled` (stopped by DELETE, or by the daemon shutting down),
// `timed_out` (timeout_ms, counted over the whole life from the first start), or
// `unknown` (lost with the daemon). A signal sent through the API is delivered and
// the resulting end is treated like any other (on-failure/always may restart it).

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {
  ErrorCodes,
  PROCESS_TAIL_BYTES,
  type ProcessEndReason,
  type ProcessLogRead,
  type ProcessRecord,
  type ProcessResult,
  type ProcessRunSummary,
  type ProcessStream,
  type ProcessStreamCapture,
  type Outcome,
  type RestartPolicy,
} from "../protocol/types.js";
import type { BackendStore, ProcessPatch, ProcessRow, SandboxRow } from "./db.js";
import { commandEnvironment, type SandboxDriver, type SandboxPlacement } from "./drivers/driver.js";
import { ApiError } from "./http.js";
import { bootId } from "./drivers/proc.js";
import { endLostProcessGroup } from "./process-group.js";
import { type LogLimits, ProcessLogStream } from "./process-logs.js";
import { RestartTracker, STABLE_UPTIME_MS } from "./process-restart.js";
import { ProcessRun, type RunExit, STDIN_PENDING_LIMIT, StdinError } from "./process-run.js";
import { confineToWorkspace, type SandboxRegistry } from "./sandbox-registry.js";

const STREAMS: readonly ProcessStream[] = ["stdout", "stderr"];

export function toProcessRecord(row: ProcessRow): ProcessRecord {
  return {
    process_id: row.process_id,
    sandbox_id: row.sandbox_id,
    name: row.name,
    idempotency_key: row.idempotency_key,
    command: JSON.parse(row.command) as string[] | string,
    working_dir: row.working_dir,
    state: row.state,
    os_pid: row.os_pid,
    restarts: row.restarts,
    restart: JSON.parse(row.restart) as RestartPolicy,
    stdin_enabled: row.stdin_enabled === 1,
    timeout_ms: row.timeout_ms,
    outcome: row.outcome,
    exit_code: row.exit_code,
    signal: row.signal,
    end_reason: row.end_reason,
    last_run: parseLastRun(row),
    next_restart_at: row.next_restart_at,
    recovery: row.recovery,
    created_at: row.created_at,
    started_at: row.started_at,
    ended_at: row.ended_at,
  };
}

function parseLastRun(row: ProcessRow): ProcessRunSummary | null {
  return row.last_run === null ? null : (JSON.parse(row.last_run) as ProcessRunSummary);
}

export interface ProcessStartSpec {
  sandbox: SandboxRow;
  command: string[] | string;
  /** As the request named it, inside /workspace. */
  workingDir: string;
  env: Record<string, string>;
  name: string | null;
  stdin: boolean;
  timeoutMs: number | null;
  restart: RestartPolicy;
  idempotencyKey: string | null;
  /** Runs inside the transaction that stores the process (e.g. to store the idempotency key with it). */
  onAdmit?: (processId: string) => void;
}

export interface ProcessSupervisorOptions {
  store: BackendStore;
  sandboxes: SandboxRegistry;
  logLimits: LogLimits;
  /** Between SIGTERM and SIGKILL at a timeout and at shutdown. */
  killGraceMs: number;
  log?: (line: string) => void;
  /** Called whenever a process ended for good (the server re-arms its idle timer). */
  onSettled?: () => void;
  /** The restart policy's clock. */
  now?: () => number;
  stableUptimeMs?: number;
}

/** Why a supervisor ends its process (first one wins). */
type StopIntent = "stop" | "timeout" | "shutdown";

const INTENT_END: Record<StopIntent, { outcome: Outcome; reason: ProcessEndReason }> = {
  stop: { outcome: "cancelled", reason: "stopped" },
  timeout: { outcome: "timed_out", reason: "timed_out" },
  shutdown: { outcome: "cancelled", reason: "backend_shutdown" },
};

interface SupervisorDeps {
  store: BackendStore;
  killGraceMs: number;
  now: () => number;
  stableUptimeMs: number;
  log: (line: string) => void;
  onEnded: (s: Supervisor) => void;
}

/** One process's supervision, from its first start until it ended for good. */
class Supervisor {
  readonly logs: Record<ProcessStream, ProcessLogStream>;
  /** Resolves once the process ended for good (or was abandoned). */
  readonly ended: Promise<void>;

  private row: ProcessRow;
  private readonly restart: RestartPolicy;
  private readonly tracker: RestartTracker;
  private readonly argv: string[];
  private run: ProcessRun | null = null;
  private intent: StopIntent | null = null;
  private backoffTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private abandoned = false;
  private resolveEnded!: () => void;
  private readonly writeFailures = new Set<ProcessStream>();

  constructor(
    private readonly deps: SupervisorDeps,
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

  /** Starts a run (a new generation when `patch` raises `restarts`). */
  startRun(patch: ProcessPatch = {}): void {
    const generation = patch.restarts ?? this.row.restarts;
    // Checked for each run: the working directory may have become a symlink out of the workspace.
    const place = confineToWorkspace(this.placement.workspaceDir, this.cwd);
    const cwd = place.cwd ?? this.cwd;
    const run = new ProcessRun({
      driver: this.driver,
      placement: this.placement,
      argv: this.argv,
      cwd,
      ...(place.problem === "outside" && {
        cwdProblem: `working directory ${this.row.working_dir} leads outside /workspace; not started`,
      }),
      env: commandEnvironment(
        this.driver,
        this.placement,
        { kind: "process", id: this.row.process_id, generation },
        cwd,
        JSON.parse(this.row.env) as Record<string, string>,
      ),
      stdin: this.row.stdin_enabled === 1,
      onOutput: (stream, chunk) => this.output(stream, chunk),
    });
    this.run = run;
    this.tracker.runStarted();
    const startedAt = run.startedAt.toISOString();
    this.patch({
      ...patch,
      state: "running",
      os_pid: run.pgid,
      pgid_start_time: run.pgidStartTime,
      boot_id: run.pgid === null ? null : bootId(),
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
      this.end(this.intentEnd(), parseLastRun(this.row));
    }
    return this.ended;
  }

  /** Delivers a signal to the current run's group. Throws 409 process_not_running. */
  signal(signal: NodeJS.Signals): { generation: number; osPid: number } {
    const run = this.run;
    if (run === null || run.ended || run.pgid === null || !run.signal(signal)) throw notRunning(this.row);
    return { generation: this.row.restarts, osPid: run.pgid };
  }

  /** Writes to the current run's stdin (and closes it on `eof`). Throws 409s. */
  async writeStdin(data: Buffer, eof: boolean): Promise<{ generation: number; bytes: number }> {
    if (this.row.stdin_enabled !== 1) throw stdinNotEnabled(this.row.process_id);
    const run = this.run;
    const generation = this.row.restarts;
    if (run === null || run.ended || this.row.state !== "running") throw notRunning(this.row);
    try {
      await run.writeStdin(data);
    } catch (err) {
      if (err instanceof StdinError && err.code === "closed") {
        throw new ApiError(
          409,
          ErrorCodes.stdinClosed,
          "stdin of this run was closed (eof); it opens again only on a restart",
          {
            process_id: this.row.process_id,
            generation,
          },
        );
      }
      if (err instanceof StdinError && err.code === "busy") {
        throw new ApiError(
          409,
          "stdin_busy",
          `${err.message} (at most ${STDIN_PENDING_LIMIT} bytes may wait for the command to read them)`,
          { process_id: this.row.process_id, generation, pending_bytes: run.stdinPending, retry_after_ms: 1000 },
          { "Retry-After": "1" },
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
    this.end({ outcome: "unknown", reason: "backend_lost" }, lastRun, { keepExit: false });
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
  }

  private runEnded(run: ProcessRun, exit: RunExit): void {
    if (this.run !== run || this.abandoned || this.deps.store.isClosed) return;
    this.run = null;
    const verdict = exit.exitCode === 0 ? "succeeded" : "failed";
    const lastRun: ProcessRunSummary = {
      generation: this.row.restarts,
      outcome: verdict,
      exit_code: exit.exitCode,
      signal: exit.signal,
      started_at: exit.startedAt.toISOString(),
      ended_at: exit.endedAt.toISOString(),
    };
    if (this.intent !== null) {
      this.end(this.intentEnd(), lastRun);
      return;
    }
    const decision = this.tracker.runEnded(verdict);
    if (!decision.restart) {
      this.end({ outcome: verdict, reason: decision.reason }, lastRun);
      return;
    }
    this.patch({
      state: "backoff",
      os_pid: null,
      pgid_start_time: null,
      last_run: JSON.stringify(lastRun),
      restarts_in_window: decision.restartsInWindow,
      next_restart_at: new Date(Date.now() + decision.delayMs).toISOString(),
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

  private end(
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
      ended_at: new Date().toISOString(),
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
      Math.max(0, at - Date.now()),
    );
  }

  private logEnds(): ProcessPatch {
    return { stdout_bytes: this.logs.stdout.end, stderr_bytes: this.logs.stderr.end };
  }

  private patch(patch: ProcessPatch): void {
    this.row = { ...this.row, ...patch };
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

function notRunning(row: ProcessRow): ApiError {
  return new ApiError(
    409,
    ErrorCodes.processNotRunning,
    `process ${row.process_id} has no running run (state ${row.state})`,
    {
      process_id: row.process_id,
      state: row.state,
    },
  );
}

function stdinNotEnabled(processId: string): ApiError {
  return new ApiError(
    409,
    ErrorCodes.stdinNotEnabled,
    "this process was started without stdin: true; its stdin is /dev/null",
    {
      process_id: processId,
    },
  );
}

export class ProcessSupervisor {
  private readonly store: BackendStore;
  private readonly sandboxes: SandboxRegistry;
  private readonly limits: LogLimits;
  private readonly log: (line: string) => void;
  private readonly onSettled: () => void;
  private readonly deps: SupervisorDeps;
  private readonly live = new Map<string, Supervisor>();
  private shuttingDown = false;

  constructor(opts: ProcessSupervisorOptions) {
    this.store = opts.store;
    this.sandboxes = opts.sandboxes;
    const { segmentBytes, keepBytes } = opts.logLimits;
    for (const [name, value] of Object.entries({
      processLogSegmentBytes: segmentBytes,
      processLogKeepBytes: keepBytes,
    })) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer (bytes)`);
    }
    // The segment being written is always kept, so less than one segment cannot be kept.
    this.limits = { segmentBytes, keepBytes: Math.max(keepBytes, segmentBytes) };
    this.log = opts.log ?? (() => {});
    this.onSettled = opts.onSettled ?? (() => {});
    this.deps = {
      store: this.store,
      killGraceMs: opts.killGraceMs,
      now: opts.now ?? Date.now,
      stableUptimeMs: opts.stableUptimeMs ?? STABLE_UPTIME_MS,
      log: this.log,
      onEnded: (s) => {
        this.live.delete(s.id);
        this.onSettled();
      },
    };
  }

  /** False once shutdown began: nothing new may start. */
  get accepting(): boolean {
    return !this.shuttingDown;
  }

  /** Processes not ended for good (running, in backoff, stopping). */
  get liveCount(): number {
    return this.live.size;
  }

  /** Stores the process, then starts its first run. Returns the record as started. */
  start(spec: ProcessStartSpec): ProcessRecord {
    const processId = `prc_${randomBytes(10).toString("hex")}`;
    this.store.transaction(() => {
      this.store.insertProcess({
        process_id: processId,
        sandbox_id: spec.sandbox.sandbox_id,
        idempotency_key: spec.idempotencyKey,
        name: spec.name,
        command: JSON.stringify(spec.command),
        working_dir: spec.workingDir,
        env: JSON.stringify(spec.env),
        stdin_enabled: spec.stdin ? 1 : 0,
        timeout_ms: spec.timeoutMs,
        restart: JSON.stringify(spec.restart),
        state: "running",
        outcome: "pending",
        exit_code: null,
        signal: null,
        end_reason: null,
        restarts: 0,
        restarts_in_window: 0,
        stop_requested: 0,
        os_pid: null,
        pgid_start_time: null,
        boot_id: null,
        recovery: null,
        last_run: null,
        next_restart_at: null,
        stdout_bytes: 0,
        stderr_bytes: 0,
        created_at: new Date().toISOString(),
        first_started_at: null,
        started_at: null,
        ended_at: null,
      });
      spec.onAdmit?.(processId);
    });
    const supervisor = this.supervise(this.store.getProcess(processId)!);
    supervisor.startRun();
    return toProcessRecord(supervisor.current);
  }

  /** The process as it is now, or null. */
  getRow(processId: string): ProcessRow | null {
    return this.live.get(processId)?.current ?? this.store.getProcess(processId) ?? null;
  }

  list(sandboxId: string, idempotencyKey?: string): ProcessRecord[] {
    return this.store
      .listProcesses(sandboxId, idempotencyKey)
      .map((row) => toProcessRecord(this.live.get(row.process_id)?.current ?? row));
  }

  /** Resolves when the process ended for good, after `ms`, or on abort. */
  waitForEnd(processId: string, ms: number, signal?: AbortSignal): Promise<void> {
    const supervisor = this.live.get(processId);
    if (!supervisor || ms <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), ms);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      signal?.addEventListener("abort", done, { once: true });
      void supervisor.ended.then(done);
    });
  }

  result(row: ProcessRow): ProcessResult {
    const logs = this.logsOf(row);
    const capture = (s: ProcessStream): ProcessStreamCapture => ({
      bytes: logs[s].end,
      oldest_offset: logs[s].oldestOffset,
      rotated: logs[s].oldestOffset > 0,
    });
    return {
      process_id: row.process_id,
      outcome: row.outcome,
      exit_code: row.exit_code,
      signal: row.signal,
      end_reason: row.end_reason,
      complete: row.state === "exited" && logs.stdout.isSealed && logs.stderr.isSealed,
      output_capture: { stdout: capture("stdout"), stderr: capture("stderr") },
      started_at: row.started_at,
      ended_at: row.ended_at,
      restarts: row.restarts,
      stdout_tail: logs.stdout.tail(PROCESS_TAIL_BYTES).toString("utf8"),
      stderr_tail: logs.stderr.tail(PROCESS_TAIL_BYTES).toString("utf8"),
    };
  }

  /**
   * Reads a stream from `offset`. At the end of a stream that may still grow, waits
   * up to `waitMs` for bytes. Throws 422 invalid_cursor past the end.
   */
  async readLogs(
    row: ProcessRow,
    q: { stream: ProcessStream; offset: number; limit: number; waitMs: number; signal?: AbortSignal },
  ): Promise<ProcessLogRead> {
    const log = this.logsOf(row)[q.stream];
    if (q.offset > log.end) {
      throw new ApiError(
        422,
        ErrorCodes.invalidCursor,
        `offset ${q.offset} is beyond the end of ${q.stream} (${log.end})`,
        {
          field: "offset",
          end: log.end,
        },
      );
    }
    let read = log.read(q.offset, q.limit);
    if (read.data.length === 0 && q.waitMs > 0 && !log.isSealed) {
      await log.waitForBytes(read.offset, q.waitMs, q.signal);
      read = log.read(q.offset, q.limit);
    }
    const current = this.getRow(row.process_id) ?? row;
    return {
      process_id: row.process_id,
      stream: q.stream,
      offset: read.offset,
      next_offset: read.nextOffset,
      data: read.data,
      eof: log.isSealed && read.nextOffset === log.end,
      rotated: read.rotated,
      oldest_offset: read.oldestOffset,
      generation: current.restarts,
    };
  }

  async writeStdin(row: ProcessRow, data: Buffer, eof: boolean): Promise<{ generation: number; bytes: number }> {
    if (row.stdin_enabled !== 1) throw stdinNotEnabled(row.process_id);
    const supervisor = this.live.get(row.process_id);
    if (!supervisor) throw notRunning(row);
    return supervisor.writeStdin(data, eof);
  }

  signal(row: ProcessRow, signal: NodeJS.Signals): { generation: number; osPid: number } {
    const supervisor = this.live.get(row.process_id);
    if (!supervisor) throw notRunning(row);
    return supervisor.signal(signal);
  }

  /** Ends a process for good (TERM, KILL after `graceMs`); outcome `cancelled`. Resolves once it ended. */
  async stop(row: ProcessRow, graceMs: number): Promise<ProcessRow> {
    const supervisor = this.live.get(row.process_id);
    if (supervisor) {
      await supervisor.requestStop("stop", graceMs);
    } else if (row.stop_requested === 0 && !this.store.isClosed) {
      // Already ended: only make sure restart recovery never starts it again.
      this.store.transaction(() => this.store.updateProcess(row.process_id, { stop_requested: 1 }));
    }
    return this.getRow(row.process_id) ?? row;
  }

  /** Stops every process of a sandbox not ended yet (sandbox rm --force); resolves once they ended. */
  async stopAllIn(sandboxId: string, graceMs: number): Promise<void> {
    const supervisors = [...this.live.values()].filter((s) => s.current.sandbox_id === sandboxId);
    await Promise.all(supervisors.map((s) => s.requestStop("stop", graceMs)));
  }

  /** Deletes an ended process's row and logs. */
  remove(row: ProcessRow): void {
    if (this.live.has(row.process_id)) throw new Error(`process ${row.process_id} is still supervised`);
    this.store.transaction(() => this.store.deleteProcess(row.process_id));
    fs.rmSync(this.logDir(row), { recursive: true, force: true });
  }

  /**
   * At start-up. Processes an earlier run of the daemon left unended (running,
   * stopping or in backoff) lost their supervisor: a leftover process group is
   * ended; `always` processes start again as a new generation (unless stopped or
   * past their timeout), the others end with outcome `unknown` and end_reason
   * `backend_lost` (last_run keeps what is known of the last run). `always`
   * processes the daemon stopped on its way down start again too.
   */
  recover(): { lost: number; restarted: number } {
    let lost = 0;
    let restarted = 0;
    const nowIso = new Date().toISOString();
    for (const found of this.store.unendedProcesses()) {
      let row = found;
      if (row.os_pid !== null) {
        const recovery = endLostProcessGroup({ pgid: row.os_pid, startTime: row.pgid_start_time, bootId: row.boot_id });
        this.log(`recovery: process ${row.process_id}: ${recovery}`);
        this.store.transaction(() => this.store.updateProcess(row.process_id, { recovery }));
        row = { ...row, recovery };
      }
      const wasRunning = row.state !== "backoff";
      if (wasRunning) lost++;
      const lastRun: ProcessRunSummary | null = wasRunning
        ? {
            generation: row.restarts,
            outcome: "unknown",
            exit_code: null,
            signal: null,
            started_at: row.started_at,
            ended_at: nowIso,
          }
        : parseLastRun(row);
      const policy = (JSON.parse(row.restart) as RestartPolicy).policy;
      const startsAgain = row.stop_requested === 0 && policy === "always" && !deadlinePassed(row);
      const supervisor = this.supervise(row);
      if (startsAgain) {
        supervisor.startRun({
          restarts: row.restarts + 1,
          last_run: lastRun === null ? null : JSON.stringify(lastRun),
        });
        restarted++;
      } else {
        supervisor.endLost(lastRun);
      }
    }
    for (const row of this.store.processesEndedByShutdown()) {
      if ((JSON.parse(row.restart) as RestartPolicy).policy !== "always" || deadlinePassed(row)) continue;
      this.supervise(row).startRun({
        restarts: row.restarts + 1,
        outcome: "pending",
        exit_code: null,
        signal: null,
        end_reason: null,
        ended_at: null,
      });
      restarted++;
    }
    if (lost > 0) this.log(`recovery: ${lost} process(es) lost by an earlier run`);
    if (restarted > 0) this.log(`recovery: ${restarted} process(es) started again`);
    return { lost, restarted };
  }

  /** Ends every live process (TERM, then KILL) and waits until their ends are stored. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    const supervisors = [...this.live.values()];
    await Promise.all(supervisors.map((s) => s.requestStop("shutdown", this.deps.killGraceMs)));
  }

  /** Forgets every live process without ending it, as a crash would (restart recovery handles them). */
  abandon(): void {
    this.shuttingDown = true;
    for (const s of this.live.values()) s.abandon();
    this.live.clear();
  }

  private supervise(row: ProcessRow): Supervisor {
    const { cwd } = this.sandboxes.workspaceCwd(row.sandbox_id, row.working_dir);
    const sandbox = this.store.getSandboxById(row.sandbox_id)!;
    const dir = this.logDir(row);
    const logs = {
      stdout: ProcessLogStream.open(dir, "stdout", this.limits, row.stdout_bytes),
      stderr: ProcessLogStream.open(dir, "stderr", this.limits, row.stderr_bytes),
    };
    const supervisor = new Supervisor(
      this.deps,
      row,
      this.sandboxes.driver(sandbox),
      this.sandboxes.placement(sandbox),
      cwd,
      logs,
    );
    this.live.set(row.process_id, supervisor);
    return supervisor;
  }

  /** The live streams, or (for an ended process) the files read from disk. */
  private logsOf(row: ProcessRow): Record<ProcessStream, ProcessLogStream> {
    const live = this.live.get(row.process_id);
    if (live) return live.logs;
    const dir = this.logDir(row);
    const open = (s: ProcessStream, knownEnd: number) => {
      const stream = ProcessLogStream.open(dir, s, this.limits, knownEnd);
      stream.seal();
      return stream;
    };
    return { stdout: open("stdout", row.stdout_bytes), stderr: open("stderr", row.stderr_bytes) };
  }

  private logDir(row: ProcessRow): string {
    return path.join(this.sandboxes.sandboxDir(row.sandbox_id), "processes", row.process_id);
  }
}

function deadlinePassed(row: ProcessRow): boolean {
  if (row.timeout_ms === null || row.first_started_at === null) return false;
  return Date.parse(row.first_started_at) + row.timeout_ms <= Date.now();
}
