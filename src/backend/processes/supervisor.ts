// The supervised processes of a backend (docs/protocol.md, "Supervised processes"):
// the live ones by id (each supervised by a SupervisedProcess, supervised-process.ts),
// starting, reading, signalling and stopping them, their records and logs, restart
// recovery (what an earlier run of the daemon left running is marked, its group
// ended, and processes whose policy starts them again start as a new generation) and
// shutdown.

import fs from "node:fs";
import path from "node:path";
import {
  ErrorCodes,
  PROCESS_TAIL_BYTES,
  type ProcessLogRead,
  type ProcessRecord,
  type ProcessResult,
  type ProcessRunSummary,
  type ProcessStream,
  type ProcessStreamCapture,
  type RestartPolicy,
} from "../../protocol/types.js";
import type { BackendStore } from "../store/index.js";
import type { SandboxRow, SandboxRegistry } from "../sandboxes/index.js";
import { type ProcessRow, ProcessStore } from "./store.js";
import { type LogLimits, type OpenPiece, ProcessLogStream } from "./logs.js";
import { STABLE_UPTIME_MS } from "./restart.js";
import { Refusal } from "../refusal.js";
import {
  fenceProcess,
  type Handle,
  type LiveRuns,
  recoverLeftRuns,
  storeAdmission,
  type TerminalSource,
} from "../runs/index.js";
import type { TerminalSize } from "../../platform/pty.js";
import {
  notRunning,
  parseLastRun,
  stdinNotEnabled,
  SupervisedProcess,
  type SupervisionDeps,
} from "./supervised-process.js";

export function toProcessRecord(row: ProcessRow): ProcessRecord {
  return {
    process_id: row.process_id,
    sandbox_id: row.sandbox_id,
    name: row.name,
    idempotency_key: row.idempotency_key,
    command: JSON.parse(row.command) as string[] | string,
    working_dir: row.working_dir,
    state: row.state,
    boot: row.daemon_boot,
    os_pid: row.os_pid,
    restarts: row.restarts,
    restart: JSON.parse(row.restart) as RestartPolicy,
    stdin_enabled: row.stdin_enabled === 1,
    ...(row.tty !== null && { tty: true }),
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
  /** Each run on a terminal of this size (its stdin is the terminal). */
  tty?: TerminalSize;
  idempotencyKey: string | null;
  /** Runs inside the transaction that stores the process (e.g. to store the idempotency key with it). */
  onAdmit?: (processId: string) => void;
}

export interface ProcessSupervisorOptions {
  store: BackendStore;
  /** The backend's live runs: supervised processes register theirs there. */
  runs: LiveRuns;
  sandboxes: SandboxRegistry;
  logLimits: LogLimits;
  /** Between SIGTERM and SIGKILL at a timeout and at shutdown. */
  killGraceMs: number;
  log?: (line: string) => void;
  /** Called whenever a process ended for good (the server re-arms its idle timer). */
  onSettled?: () => void;
  /** The clock: record times, restart back-off and uptime, life deadlines. */
  now?: () => number;
  stableUptimeMs?: number;
}

export class ProcessSupervisor {
  private readonly store: ProcessStore;
  private readonly sandboxes: SandboxRegistry;
  private readonly limits: LogLimits;
  private readonly log: (line: string) => void;
  private readonly onSettled: () => void;
  private readonly deps: SupervisionDeps;
  private readonly runs: LiveRuns;
  private readonly live: Map<string, SupervisedProcess>;

  constructor(opts: ProcessSupervisorOptions) {
    this.store = new ProcessStore(opts.store);
    this.sandboxes = opts.sandboxes;
    this.runs = opts.runs;
    this.live = opts.runs.of<SupervisedProcess>("process");
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
      boot: opts.runs.boot,
      stableUptimeMs: opts.stableUptimeMs ?? STABLE_UPTIME_MS,
      log: this.log,
      onEnded: (s) => {
        this.live.delete(s.id);
        this.onSettled();
      },
    };
  }

  /**
   * Stores the process, then starts its first run. Returns the record as started.
   * Refused as not_started (runs/admission.ts) when it cannot be stored or the backend shuts down.
   */
  start(spec: ProcessStartSpec): ProcessRecord {
    this.runs.requireAccepting();
    const processId = this.store.db.newId("processes");
    storeAdmission(this.store, "process", () => {
      if (spec.name !== null) this.requireFreeName(spec.sandbox, spec.name);
      this.store.insertProcess({
        process_id: processId,
        sandbox_id: spec.sandbox.sandbox_id,
        idempotency_key: spec.idempotencyKey,
        name: spec.name,
        command: JSON.stringify(spec.command),
        working_dir: spec.workingDir,
        env: JSON.stringify(spec.env),
        stdin_enabled: spec.stdin || spec.tty !== undefined ? 1 : 0,
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
        daemon_boot: null,
        recovery: null,
        last_run: null,
        next_restart_at: null,
        stdout_bytes: 0,
        stderr_bytes: 0,
        created_at: new Date(this.deps.now()).toISOString(),
        first_started_at: null,
        started_at: null,
        ended_at: null,
        tty: spec.tty === undefined ? null : JSON.stringify({ cols: spec.tty.cols, rows: spec.tty.rows }),
      });
      spec.onAdmit?.(processId);
    });
    const supervisor = this.supervise(this.store.getProcess(processId)!);
    supervisor.startRun();
    return toProcessRecord(supervisor.current);
  }

  /** Refuses a name a process of the sandbox has until it exits (as docker's "name already in use"). */
  private requireFreeName(sandbox: SandboxRow, name: string): void {
    const holder = this.store.unendedProcessNamed(sandbox.sandbox_id, name);
    if (holder === undefined) return;
    throw new Refusal(
      ErrorCodes.processNameInUse,
      `the name ${JSON.stringify(name)} is in use by process ${holder.process_id} (${holder.state}) in sandbox ${sandbox.name}: a name is free again once its process has exited`,
      { name, process_id: holder.process_id, state: holder.state },
    );
  }

  /**
   * Why a process's run could not start because its sandbox could not be set up, once
   * that is known (soon after its start): null when its command started.
   */
  startFailure(processId: string): Promise<string | null> {
    return this.live.get(processId)?.startFailure() ?? Promise.resolve(null);
  }

  /**
   * The terminal of a process whose runs are on one (docs/protocol.md, "Terminals"):
   * its transcript is its stdout log; each run has a terminal of its own. Null when
   * there is no such process, "not_a_terminal" when its runs are not on one.
   */
  terminal(processId: string): TerminalSource | null | "not_a_terminal" {
    const row = this.getRow(processId);
    if (row === null) return null;
    if (row.tty === null) return "not_a_terminal";
    const live = this.live.get(processId);
    const logs = live?.logs.stdout ?? null;
    return {
      read: (offset, limit) => {
        if (logs === null) return { offset, data: Buffer.alloc(0) };
        const r = logs.read(Math.min(offset, logs.end), limit);
        return { offset: r.offset, data: r.data };
      },
      size: () => logs?.end ?? row.stdout_bytes,
      watch: (listener) => live?.watchTerminal(listener) ?? (() => {}),
      ended: () => {
        const now = this.getRow(processId);
        if (now === null || now.state !== "exited") return null;
        return {
          outcome: now.outcome,
          exit_code: now.exit_code,
          signal: now.signal,
          system_error: now.end_reason,
          finished_at: now.ended_at,
        };
      },
      terminal: () => live?.terminal() ?? null,
    };
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
   * up to `waitMs` for bytes. Refuses (invalid_cursor) an offset past the end.
   */
  async readLogs(
    row: ProcessRow,
    q: { stream: ProcessStream; offset: number; limit: number; waitMs: number; signal?: AbortSignal },
  ): Promise<ProcessLogRead> {
    return this.logsRead(
      row,
      q,
      (log) => log.read(q.offset, q.limit),
      (read) => read.data.length === 0,
    );
  }

  /**
   * As readLogs, the bytes left in their files: each piece an open descriptor (closed
   * by the caller), for a raw read streamed to the socket (never held whole).
   */
  async openLogs(
    row: ProcessRow,
    q: { stream: ProcessStream; offset: number; limit: number; waitMs: number; signal?: AbortSignal },
  ): Promise<Omit<ProcessLogRead, "data"> & { pieces: OpenPiece[] }> {
    return this.logsRead(
      row,
      q,
      (log) => log.openRange(q.offset, q.limit),
      (range) => range.pieces.length === 0,
    );
  }

  private async logsRead<R extends { offset: number; nextOffset: number; rotated: boolean; oldestOffset: number }>(
    row: ProcessRow,
    q: { stream: ProcessStream; offset: number; limit: number; waitMs: number; signal?: AbortSignal },
    take: (log: ProcessLogStream) => R,
    empty: (read: R) => boolean,
  ): Promise<Omit<ProcessLogRead, "data"> & Omit<R, "offset" | "nextOffset" | "rotated" | "oldestOffset">> {
    const log = this.logsOf(row)[q.stream];
    if (q.offset > log.end) {
      throw new Refusal(ErrorCodes.invalidCursor, `offset ${q.offset} is beyond the end of ${q.stream} (${log.end})`, {
        field: "offset",
        end: log.end,
      });
    }
    let read = take(log);
    if (empty(read) && q.waitMs > 0 && !log.isSealed) {
      await log.waitForBytes(read.offset, q.waitMs, q.signal);
      read = take(log);
    }
    const current = this.getRow(row.process_id) ?? row;
    const { offset, nextOffset, rotated, oldestOffset, ...rest } = read;
    return {
      ...rest,
      process_id: row.process_id,
      stream: q.stream,
      offset,
      next_offset: nextOffset,
      eof: log.isSealed && nextOffset === log.end,
      rotated,
      oldest_offset: oldestOffset,
      generation: current.restarts,
    };
  }

  /**
   * The ownership fence (docs/protocol.md, "Ownership fences"): a request issued
   * against another run, or another boot's run, than the current one is refused before
   * anything reaches the process. Checked and acted on in one turn of the event loop.
   */
  private fence(row: ProcessRow, handle: Handle): void {
    if (handle.run === undefined && handle.boot === undefined) return;
    const live = this.live.get(row.process_id);
    const now = live ? null : (this.getRow(row.process_id) ?? row);
    fenceProcess(row.process_id, handle, {
      run: live?.generation ?? now!.restarts,
      boot: live ? live.boot : now!.daemon_boot,
    });
  }

  async writeStdin(
    row: ProcessRow,
    data: Buffer,
    eof: boolean,
    handle: Handle = {},
  ): Promise<{ generation: number; bytes: number }> {
    this.fence(row, handle);
    if (row.stdin_enabled !== 1) throw stdinNotEnabled(row.process_id);
    const supervisor = this.live.get(row.process_id);
    if (!supervisor) throw notRunning(row);
    return supervisor.writeStdin(data, eof);
  }

  signal(row: ProcessRow, signal: NodeJS.Signals, handle: Handle = {}): { generation: number; osPid: number } {
    this.fence(row, handle);
    const supervisor = this.live.get(row.process_id);
    if (!supervisor) throw notRunning(row);
    return supervisor.signal(signal);
  }

  /** Ends a process for good (TERM, KILL after `graceMs`); outcome `cancelled`. Resolves once it ended. */
  async stop(row: ProcessRow, graceMs: number, handle: Handle = {}): Promise<ProcessRow> {
    this.fence(row, handle);
    const supervisor = this.live.get(row.process_id);
    if (supervisor) {
      await supervisor.requestStop("stop", graceMs);
    } else if (row.stop_requested === 0 && !this.store.isClosed) {
      // Already ended: only make sure restart recovery never starts it again.
      this.store.transaction(() => this.store.updateProcess(row.process_id, { stop_requested: 1 }));
    }
    return this.getRow(row.process_id) ?? row;
  }

  /** Processes of a sandbox not ended for good: sandbox removal is refused while any is. */
  unendedIn(sandboxId: string): number {
    return this.store.countUnendedProcesses(sandboxId);
  }

  /** Exited processes, oldest first (by when they ended), ended before `before` (ISO): for retention. */
  exitedBefore(before: string, limit: number): ProcessRow[] {
    return this.store.exitedProcesses({ before, limit });
  }

  /** How many processes are kept, and how many have not ended for good. */
  counts(): { processes: number; running: number } {
    return this.store.counts();
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
    const nowIso = new Date(this.deps.now()).toISOString();
    recoverLeftRuns({
      kind: "process",
      left: this.store.unendedProcesses(),
      label: (row) => row.process_id,
      pgid: (row) => row.os_pid,
      settle: (left, _found, recovery) => {
        let row = left;
        if (recovery !== null) {
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
        const startsAgain = row.stop_requested === 0 && policy === "always" && !deadlinePassed(row, this.deps.now());
        const supervisor = this.supervise(row);
        if (!startsAgain) {
          supervisor.endLost(lastRun);
          return "unknown (backend_lost)";
        }
        supervisor.startRun({
          restarts: row.restarts + 1,
          last_run: lastRun === null ? null : JSON.stringify(lastRun),
        });
        restarted++;
        return "started again (restart policy always)";
      },
      log: this.log,
    });
    for (const row of this.store.processesEndedByShutdown()) {
      if ((JSON.parse(row.restart) as RestartPolicy).policy !== "always" || deadlinePassed(row, this.deps.now()))
        continue;
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

  private supervise(row: ProcessRow): SupervisedProcess {
    const sandbox = this.sandboxes.byId(row.sandbox_id)!;
    const cwd = this.sandboxes.runCwd(sandbox, row.working_dir);
    const dir = this.logDir(row);
    const logs = {
      stdout: ProcessLogStream.open(dir, "stdout", this.limits, row.stdout_bytes),
      stderr: ProcessLogStream.open(dir, "stderr", this.limits, row.stderr_bytes),
    };
    const supervisor = new SupervisedProcess(
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

function deadlinePassed(row: ProcessRow, now: number): boolean {
  if (row.timeout_ms === null || row.first_started_at === null) return false;
  return Date.parse(row.first_started_at) + row.timeout_ms <= now;
}
