// The life of an execution: admitted (row inserted, outcome pending) → started on
// the driver (`started` event) → output (events and output files) → ended (row
// updated with `exit` and `end` events in one transaction, waiters woken). Also
// cancel (the group is ended; the outcome follows when it is gone), restart
// recovery (rows an earlier run left pending become `unknown`/`exec_stream_lost`,
// their logs end with `exit` unknown and `end` incomplete, their process groups
// are ended) and shutdown (running groups are ended and marked).
//
// Longer than ~450 lines on purpose: admission (held or not), the end, cancel,
// recovery and answers kept in memory on a full disk share one state (the live runs,
// the unsaved ends) and one order of writes; the run (runner.ts), the event log
// (events.ts, event-drafter.ts), the rows (store.ts) and what an end looks like
// (ending.ts: its columns and how its log ends) are apart.

import { EGRESS_DENIED_EVENTS_MAX, type ExecutionRecord, type StartedEventData } from "../../protocol/types.js";
import type { TerminalSize } from "../../platform/pty.js";
import type { BackendStore } from "../store/index.js";
import { type SandboxRow, storedImageOf } from "../sandboxes/index.js";
import {
  type ExecutionEnd,
  type ExecutionQuery,
  type ExecutionRow,
  ExecutionStore,
  toExecutionRecord,
} from "./store.js";
import {
  bootId,
  commandEnvironment,
  type FollowedRun,
  type SandboxDriver,
  type SandboxPlacement,
  type StreamBytes,
} from "../drivers/index.js";
import type { EventLog, EventWriter } from "./events.js";
import type { ExecutionRunner, RunHandle, RunResult } from "./runner.js";
import {
  admissionFailure,
  type EndReason,
  fenceExecution,
  type LiveRun,
  type LiveRuns,
  recoverLeftRuns,
  storeAdmission,
  type TerminalSource,
  RunListeners,
} from "../runs/index.js";
import { executionTerminal } from "./terminal.js";
import { EgressDenials } from "./egress-denials.js";
import type { EgressHub } from "../egress/index.js";
import { FollowedHandle, keptBytes, storeFollowedEnd } from "./followed.js";
import {
  endColumns,
  endingOf,
  lostEnd,
  lostLogEnding,
  SYSTEM_ERROR_BACKEND_SHUTDOWN,
  SYSTEM_ERROR_DRIVER,
  SYSTEM_ERROR_STREAM_LOST,
} from "./ending.js";

export { SYSTEM_ERROR_BACKEND_SHUTDOWN, SYSTEM_ERROR_DRIVER, SYSTEM_ERROR_STREAM_LOST } from "./ending.js";

export interface AdmitSpec {
  sandbox: SandboxRow;
  driver: SandboxDriver;
  placement: SandboxPlacement;
  command: string[] | string;
  /** As the request named it, inside /workspace. */
  workingDir: string;
  /** The real directory behind workingDir. */
  cwd: string;
  /** What the request sets on top of the command environment. */
  env: Record<string, string>;
  stdin: Buffer | null;
  timeoutMs: number;
  idempotencyKey: string | null;
  /** Runs inside the admission transaction (e.g. to store the idempotency key with the row). */
  onAdmit?: (executionId: string) => void;
  /** On a terminal of this size (stdin must be null). */
  tty?: TerminalSize;
}

export type CancelResult = "requested" | "already_terminal";

interface LiveExecution extends LiveRun {
  handle: Pick<RunHandle, "cancel" | "abandon" | "terminal">;
  /** Null for a run followed again after a restart (followed.ts): its end is appended to its log. */
  writer: EventWriter | null;
  waiters: Set<() => void>;
  /** Resolves once the end is stored. */
  settled: Promise<void>;
}

export interface ExecutionManagerOptions {
  store: BackendStore;
  runner: ExecutionRunner;
  events: EventLog;
  /** The backend's live runs: executions register theirs there. */
  runs: LiveRuns;
  log?: (line: string) => void;
  /** Called whenever an execution ends (the server re-arms its idle timer). */
  onSettled?: () => void;
  /** The clock record times are read from. */
  now?: () => number;
  /** The sandboxes' egress proxies: their refusals are charged to the executions running (egress-denials.ts). */
  egress?: EgressHub;
}

export class ExecutionManager {
  private readonly store: ExecutionStore;
  private readonly runner: ExecutionRunner;
  private readonly events: EventLog;
  private readonly log: (line: string) => void;
  private readonly onSettled: () => void;
  private readonly now: () => number;
  private readonly runs: LiveRuns;
  private readonly live: Map<string, LiveExecution>;
  /**
   * Ends that are known but not stored yet (a commit failed, e.g. on a full disk): the
   * record is answered from here, as record_pending, until the event log stores it.
   */
  private readonly unsavedEnds = new Map<string, ExecutionEnd>();
  /** Attached terminals, told of each execution's output and end. */
  private readonly watchers = new RunListeners();
  private readonly denials: EgressDenials;

  constructor(opts: ExecutionManagerOptions) {
    this.store = new ExecutionStore(opts.store);
    this.runner = opts.runner;
    this.events = opts.events;
    this.log = opts.log ?? (() => {});
    this.onSettled = opts.onSettled ?? (() => {});
    this.now = opts.now ?? Date.now;
    this.runs = opts.runs;
    this.live = opts.runs.of<LiveExecution>("execution");
    this.denials = new EgressDenials(opts.egress ?? null);
  }

  isLive(executionId: string): boolean {
    return this.live.has(executionId);
  }

  get(executionId: string): ExecutionRecord | null {
    const row = this.store.getExecution(executionId);
    return row ? this.recordOf(row) : null;
  }

  /**
   * A page of a sandbox's executions, newest first, each as get() answers it but
   * without its kept output (stdout and stderr ""): an end known but not stored yet
   * reads as that outcome with record_pending, in the list as by id, and counts
   * under that outcome, not under `pending`. `nextCursor` continues after the page.
   */
  list(q: Omit<ExecutionQuery, "withoutOutput">): {
    executions: ExecutionRecord[];
    nextCursor: string | null;
    liveCount: number;
  } {
    const rows = this.store.listExecutions({ ...q, limit: q.limit + 1, withoutOutput: true });
    const page = rows.slice(0, q.limit);
    const more = rows.length > q.limit;
    let items = page.map((row) => ({ seq: row.seq, record: this.recordOf(row, { withoutOutput: true }) }));
    if (q.outcome !== undefined) {
      // The filter reads what the records say: unsaved ends leave `pending` for their outcome.
      items = items.filter((i) => i.record.outcome === q.outcome);
      const floor = more ? page[page.length - 1]!.seq : 0;
      for (const id of this.unsavedEnds.keys()) {
        const row = this.store.getExecution(id);
        if (!row || row.sandbox_id !== q.sandboxId || row.seq < floor) continue;
        if (q.beforeSeq !== undefined && row.seq >= q.beforeSeq) continue;
        if (q.idempotencyKey !== undefined && row.idempotency_key !== q.idempotencyKey) continue;
        if (q.idPrefix !== undefined && !row.execution_id.startsWith(q.idPrefix)) continue;
        const record = this.recordOf(row, { withoutOutput: true });
        if (record.outcome === q.outcome && !items.some((i) => i.seq === row.seq)) items.push({ seq: row.seq, record });
      }
      items.sort((a, b) => b.seq - a.seq);
    }
    const unsavedHere = [...this.unsavedEnds.keys()].filter(
      (id) => this.store.getExecution(id)?.sandbox_id === q.sandboxId,
    ).length;
    return {
      executions: items.map((i) => i.record),
      nextCursor: more ? String(page[page.length - 1]!.seq) : null,
      liveCount: this.store.countPending(q.sandboxId) - unsavedHere,
    };
  }

  /** A row as answered: an end known but not stored yet (a full disk) is said, with record_pending (it ran; do not resubmit). */
  private recordOf(row: ExecutionRow, opts: { withoutOutput?: boolean } = {}): ExecutionRecord {
    const unsaved = this.unsavedEnds.get(row.execution_id);
    // Running: what its sandbox's egress proxy refused so far (egress-denials.ts).
    const denied = row.outcome === "pending" ? this.denials.current(row.execution_id) : null;
    if (denied !== null) return { ...toExecutionRecord(row), egress_denied: denied };
    if (unsaved === undefined || row.outcome !== "pending") return toExecutionRecord(row);
    const output = opts.withoutOutput ? { stdout: "", stderr: "" } : {};
    return toExecutionRecord({ ...row, ...endColumns(unsaved), ...output, record_pending: 1 });
  }

  /** The execution ended and its event log's end is stored: a reader of the log will see `end`. */
  logEnded(executionId: string): boolean {
    const row = this.store.getExecution(executionId);
    return row === undefined || (row.outcome !== "pending" && !this.unsavedEnds.has(executionId));
  }

  /**
   * Stores the execution (pending), then starts it. Returns the record as admitted.
   * On a driver that starts runs held (bwrap), the run is spawned first, waiting, and
   * its admission, its start (process group) and its `started` event are stored in one
   * transaction before its command may run; otherwise the row is stored before the
   * spawn and the start after it. Either way an execution is known before its command
   * can have had any effect, and a run is never let go unless its admission is stored.
   * Refused as not_started (runs/admission.ts) when it cannot be stored or the backend shuts down.
   */
  admit(spec: AdmitSpec): ExecutionRecord {
    this.runs.requireAccepting();
    const executionId = this.store.db.newId("executions");
    const sandboxId = spec.sandbox.sandbox_id;
    const held = spec.driver.startsHeld;
    // Admitted now, before its run starts, even when the row is written after the spawn (held).
    const createdAt = new Date(this.now()).toISOString();
    const insert = () => {
      this.store.insertExecution({
        execution_id: executionId,
        sandbox_id: sandboxId,
        idempotency_key: spec.idempotencyKey,
        command: spec.command,
        working_dir: spec.workingDir,
        timeout_ms: spec.timeoutMs,
        created_at: createdAt,
        daemon_boot: this.runs.boot,
        ...(spec.tty !== undefined && { tty: true }),
        image_digest: storedImageOf(spec.sandbox)?.digest ?? null,
      });
      spec.onAdmit?.(executionId);
    };
    if (!held) this.storeAdmission(insert);

    const env = commandEnvironment(
      spec.driver,
      spec.placement,
      { kind: "execution", id: executionId },
      spec.cwd,
      spec.env,
    );
    const argv = typeof spec.command === "string" ? ["/bin/sh", "-c", spec.command] : spec.command;
    let writer: EventWriter;
    try {
      writer = this.events.open(executionId, sandboxId);
    } catch (err) {
      if (held) this.storeAdmission(insert);
      this.log(`execution ${executionId}: could not open its output files: ${(err as Error).message}`);
      const end = lostEnd(SYSTEM_ERROR_DRIVER, this.now());
      this.events.appendEnding(executionId, sandboxId, endingOf(end), () =>
        this.store.finishExecution(executionId, end),
      );
      return this.get(executionId)!;
    }
    let outputFailed = false;
    let handle: RunHandle;
    try {
      handle = this.runner.start({
        executionId,
        driver: spec.driver,
        placement: spec.placement,
        argv,
        cwd: spec.cwd,
        env,
        stdin: spec.stdin,
        timeoutMs: spec.timeoutMs,
        held,
        ...(spec.tty !== undefined && { terminal: spec.tty }),
        onOutput: (stream, chunk) => {
          try {
            writer.output(stream, chunk);
            this.watchers.notify(executionId);
          } catch (err) {
            // E.g. a full disk: the record's tail still has the output; say so once.
            if (!outputFailed) {
              this.log(`execution ${executionId}: could not keep its output: ${(err as Error).message}`);
            }
            outputFailed = true;
          }
        },
      });
    } catch (err) {
      if (held) this.admitOrDiscard(insert, writer);
      this.log(`execution ${executionId}: driver failed to start it: ${(err as Error).message}`);
      const end = lostEnd(SYSTEM_ERROR_DRIVER, this.now());
      writer.finish(endingOf(end), () => this.store.finishExecution(executionId, end));
      return this.get(executionId)!;
    }
    // A reader behind on the output past the cap holds the command's output back (live-output.ts).
    writer.live.pacedBy({ pause: () => handle.pauseOutput(), resume: () => handle.resumeOutput() });
    const startedAt = handle.startedAt.toISOString();
    const group = {
      pgid: handle.pgid,
      startTime: handle.pgidStartTime,
      bootId: handle.pgid === null ? null : bootId(),
    };
    const started = { execution_id: executionId, sandbox_id: sandboxId, started_at: startedAt, boot: this.runs.boot };
    const markStarted = () => this.store.markExecutionStarted(executionId, startedAt, group);
    if (held) {
      // One fsync'd transaction for the admission, the start and the `started` event; then the command runs.
      const admitStarted = () => {
        insert();
        markStarted();
      };
      this.admitOrDiscard(admitStarted, writer, started, handle);
      handle.proceed();
    } else if (!writer.started(started, markStarted)) {
      // The start and the `started` event are one transaction. It runs: follow it; its
      // start and end are stored (or retried, in order) with its event log.
      this.log(`execution ${executionId}: could not record its start yet; its event log keeps trying`);
    }
    const entry: LiveExecution = {
      handle,
      writer,
      sandboxId,
      waiters: new Set(),
      settled: handle.done.then((result) => this.settle(executionId, result)),
      end: (reason: EndReason) => {
        if (reason === "sandbox_removed") this.cancel(executionId, "sandbox removed");
        else if (reason === "sandbox_stopped") this.cancel(executionId, "sandbox stopped");
        else handle.cancel();
        return entry.settled;
      },
      abandon: () => {
        handle.abandon();
        for (const wake of [...entry.waiters]) wake();
      },
    };
    this.live.set(executionId, entry);
    // Each refusal is an event of its log too, up to EGRESS_DENIED_EVENTS_MAX (then only counted).
    this.denials.begin(executionId, sandboxId, (denial, total) => {
      if (total <= EGRESS_DENIED_EVENTS_MAX) writer.note("egress_denied", { ...denial, total }, denial.at);
    });
    return this.get(executionId)!;
  }

  /** Stores an admission; a storage failure (nothing was stored, nothing started) is not_started. */
  private storeAdmission(work: () => void): void {
    storeAdmission(this.store, "execution", work);
  }

  /**
   * Stores the admission of a run spawned held (with its `started` event when given);
   * when that fails, the run is ended before its command ever ran, its files go, and
   * the failure is thrown (not_started on a storage failure: nothing started).
   */
  private admitOrDiscard(work: () => void, writer: EventWriter, started?: StartedEventData, handle?: RunHandle): void {
    try {
      if (started) writer.admittedAndStarted(started, work);
      else this.storeAdmission(work);
    } catch (err) {
      handle?.discard();
      writer.discard();
      throw admissionFailure(err, "execution");
    }
  }

  /** Executions of a sandbox not ended (as stored): sandbox removal is refused while any is. */
  runningIn(sandboxId: string): number {
    return this.store.countPending(sandboxId);
  }

  /** Resolves when the execution is no longer running, after `timeoutMs`, or on abort. */
  waitForTerminal(executionId: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const entry = this.live.get(executionId);
    if (!entry || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = Number.isFinite(timeoutMs) ? setTimeout(() => wake(), Math.max(0, timeoutMs)) : undefined;
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", wake);
        entry.waiters.delete(wake);
        resolve();
      };
      entry.waiters.add(wake);
      signal?.addEventListener("abort", wake, { once: true });
    });
  }

  /**
   * Asks a running execution to end: its group gets TERM, then KILL after the grace.
   * The outcome becomes `cancelled` when the group is gone, not here. Null: no such execution.
   * With `boot` (the handle's), refused as stale_handle unless the execution ran in that boot.
   */
  cancel(executionId: string, reason: string | null, boot?: string): CancelResult | null {
    const row = this.store.getExecution(executionId);
    if (!row) return null;
    fenceExecution(executionId, boot, row.daemon_boot);
    if (row.outcome !== "pending") return "already_terminal";
    this.store.transaction(() => this.store.markCancelRequested(executionId));
    this.log(`execution ${executionId}: cancel requested${reason ? ` (${JSON.stringify(reason)})` : ""}`);
    this.live.get(executionId)?.handle.cancel();
    return "requested";
  }

  /**
   * At start-up: executions an earlier run left pending lost their process; they
   * become unknown/exec_stream_lost, their event logs end with `exit` (outcome
   * unknown) and `end` incomplete (reason exec_stream_lost), and their process
   * groups are ended when they are still ours (the record says what was found).
   * Records an earlier version kept unpublished (record_pending) are published.
   * `follow`: a run that outlives the backend (slurm) is followed again (followed.ts).
   */
  recover(follow?: (row: ExecutionRow, had: StreamBytes) => FollowedRun | null): { lost: number; published: number } {
    const left: ExecutionRow[] = [];
    for (const row of this.store.pendingExecutions()) {
      const dir = this.events.outputDir(row.sandbox_id, row.execution_id);
      const run = row.tty === 1 ? null : (follow?.(row, keptBytes(dir)) ?? null);
      if (run === null) left.push(row);
      else this.followAgain(row, run, dir);
    }
    const lost = recoverLeftRuns({
      kind: "execution",
      left,
      label: (row) => row.execution_id,
      pgid: (row) => row.pgid,
      settle: (row, _found, said) => {
        this.events.appendEnding(row.execution_id, row.sandbox_id, lostLogEnding(row), () =>
          this.store.markExecutionLost(row.execution_id, said),
        );
        return `unknown (${SYSTEM_ERROR_STREAM_LOST})`;
      },
      log: this.log,
    });
    const unpublished = this.store.unpublishedExecutions();
    for (const row of unpublished) this.store.transaction(() => this.store.publishExecution(row.execution_id));
    if (lost > 0) this.log(`recovery: ${lost} execution(s) lost by an earlier run`);
    return { lost, published: unpublished.length };
  }

  /** An execution an earlier backend started, whose run outlived it: followed to its end (followed.ts). */
  private followAgain(row: ExecutionRow, run: FollowedRun, dir: string): void {
    const id = row.execution_id;
    const onOutput = () => this.watchers.notify(id);
    const handle = new FollowedHandle({ row, run, dir, killGraceMs: this.runner.killGraceMs, now: this.now, onOutput });
    const wakeAll = () => {
      for (const wake of [...entry.waiters]) wake();
    };
    const entry: LiveExecution = {
      handle,
      writer: null,
      sandboxId: row.sandbox_id,
      waiters: new Set(),
      settled: handle.done.then((result) => {
        if (this.store.isClosed) return;
        storeFollowedEnd(this.events, this.store, row, result, endingOf(result.end));
        this.log(`execution ${id}: ${result.end.outcome} (followed after a restart): ${result.recovery}`);
        this.live.delete(id);
        wakeAll();
        this.watchers.notify(id);
        this.onSettled();
      }),
      end: () => handle.cancelUntil(entry.settled),
      abandon: () => handle.abandon(wakeAll),
    };
    this.live.set(id, entry);
  }

  /** Once the live runs ended at shutdown (LiveRuns.shutdown): closes the event logs. */
  closeAfterShutdown(): void {
    this.events.close();
  }

  /** Once the live runs were abandoned (LiveRuns.abandon, a simulated crash): drops event logs unwritten. */
  dropAfterCrash(): void {
    this.events.abandon();
  }

  private settle(executionId: string, result: RunResult): void {
    const entry = this.live.get(executionId);
    if (!entry?.writer || this.store.isClosed) return;
    const shutdownCancel = this.runs.shuttingDown && result.outcome === "cancelled";
    const end: ExecutionEnd = {
      outcome: result.outcome,
      exit_code: result.exitCode,
      signal: result.signal,
      system_error: result.systemError ?? (shutdownCancel ? SYSTEM_ERROR_BACKEND_SHUTDOWN : null),
      end_reason: result.endReason,
      usage: result.usage,
      egress_denied: this.denials.end(executionId),
      record_pending: false,
      stdout: result.stdout.text,
      stderr: result.stderr.text,
      stdout_bytes: result.stdout.bytes,
      stderr_bytes: result.stderr.bytes,
      // Truncated: the record's tail, or the output file (it stopped at its cap).
      stdout_truncated: result.stdout.truncated || entry.writer.truncated("stdout"),
      stderr_truncated: result.stderr.truncated || entry.writer.truncated("stderr"),
      finished_at: result.finishedAt.toISOString(),
      duration_ms: result.finishedAt.getTime() - result.startedAt.getTime(),
    };
    const stored = entry.writer.finish(
      endingOf(end),
      () => this.store.finishExecution(executionId, end),
      () => {
        this.unsavedEnds.delete(executionId);
        // Stored late (after a failed commit): only now is its log complete, so only
        // now can an attached terminal be told the exit (TerminalSource.ended).
        this.watchers.notify(executionId);
      },
    );
    if (!stored) {
      // Never `pending` until a restart: answered from memory until the log stores it.
      this.unsavedEnds.set(executionId, end);
      this.log(`execution ${executionId}: its end is kept in memory until it can be stored`);
    }
    this.live.delete(executionId);
    for (const wake of [...entry.waiters]) wake();
    this.watchers.notify(executionId);
    this.onSettled();
  }

  /**
   * The terminal of an execution run on one (docs/protocol.md, "Terminals"): null when
   * there is no such execution, "not_a_terminal" when it did not run on one.
   */
  terminal(executionId: string): TerminalSource | null | "not_a_terminal" {
    const row = this.store.getExecution(executionId);
    if (!row) return null;
    if (row.tty !== 1) return "not_a_terminal";
    return executionTerminal({
      dir: this.events.outputDir(row.sandbox_id, executionId),
      record: () => this.get(executionId),
      logEnded: () => this.logEnded(executionId),
      terminal: () => this.live.get(executionId)?.handle.terminal ?? null,
      watch: (listener) => this.watchers.watch(executionId, listener),
    });
  }
}
