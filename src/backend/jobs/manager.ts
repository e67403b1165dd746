// The life of jobs: admitted (rows inserted `waiting` or `queued`, idempotently by
// request id, admission.ts) → scheduled (schedule.ts: dependencies, the per-sandbox
// concurrency limit, queue keys) → `running` (committed before the command starts,
// so a crash can never run it twice) → ended (status from the run's end, output
// committed with it, waiters woken, the next jobs scheduled). Also cancel (with
// dependents), restart recovery (recovery.ts: running jobs become `interrupted` or
// `lost`, never resumed; queued ones stay queued and run) and shutdown. Starting and
// ending processes is job-run.ts's part.
//
// Longer than ~450 lines on purpose: admission, the scheduler's effects, start, end
// and cancel share one state (the rows, the running jobs, the waiters) and one order
// of writes; what is pure is apart (admission.ts, schedule.ts), and so are output
// (output.ts), recovery (recovery.ts) and the run itself (job-run.ts).

import type {
  JobCancelAnswer,
  JobRecord,
  JobSubmitAnswer,
  JobSubmitItem,
  JobSubmitRequest,
  JobSummary,
} from "../../protocol/jobs.js";
import { WORKSPACE } from "../../protocol/types.js";
import type { BackendStore } from "../store/index.js";
import { type SandboxRow, confineToWorkspace, type SandboxRegistry } from "../sandboxes/index.js";
import { judgeSubmission, normalizeSubmission } from "./admission.js";
import { commandEnvironment } from "../drivers/index.js";
import { JobRun, type JobRunResult } from "./job-run.js";
import { JobOutputLog, type JobOutputWriter } from "./output.js";
import { type PlanJob, planJobs, type RunEnd, statusOfRun, transitiveDependents } from "./schedule.js";
import { type JobFilter, type JobPatch, type JobRow, JobStore, toJobSummary } from "./store.js";
import { describeLeftovers, recoverJobs } from "./recovery.js";
import { type EndReason, type LiveRun, type LiveRuns, storeAdmission } from "../runs/index.js";

export const DEFAULT_JOB_CONCURRENCY = 4;

export interface JobManagerOptions {
  store: BackendStore;
  /** The backend's live runs: running jobs register theirs there. */
  runs: LiveRuns;
  sandboxes: SandboxRegistry;
  /** Between SIGTERM and SIGKILL to a job's group. */
  killGraceMs: number;
  /** Jobs running at once per sandbox; the rest wait as `queued`. Default 4. */
  concurrency?: number;
  /** Output bytes kept per job (head and tail). Default 8 MiB. */
  outputBudgetBytes?: number;
  outputFlushMs?: number;
  log?: (line: string) => void;
  /** Called whenever a job ended (the server re-arms its idle timer). */
  onSettled?: () => void;
  /** The clock: record times and runs' starts and ends. */
  now?: () => number;
}

interface LiveJob extends LiveRun {
  run: JobRun;
  writer: JobOutputWriter;
  /** Resolves once the job's end is stored. */
  settled: Promise<void>;
}

export class JobManager {
  private readonly rows: JobStore;
  private readonly sandboxes: SandboxRegistry;
  private readonly output: JobOutputLog;
  private readonly killGraceMs: number;
  private readonly concurrency: number;
  private readonly log: (line: string) => void;
  private readonly onSettled: () => void;
  private readonly now: () => number;
  private readonly runs: LiveRuns;
  private readonly live: Map<string, LiveJob>;
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(opts: JobManagerOptions) {
    this.rows = new JobStore(opts.store);
    this.sandboxes = opts.sandboxes;
    this.killGraceMs = opts.killGraceMs;
    this.concurrency = opts.concurrency ?? DEFAULT_JOB_CONCURRENCY;
    if (!Number.isSafeInteger(this.concurrency) || this.concurrency < 1) {
      throw new RangeError("job concurrency must be a positive integer");
    }
    this.log = opts.log ?? (() => {});
    this.onSettled = opts.onSettled ?? (() => {});
    this.now = opts.now ?? Date.now;
    this.runs = opts.runs;
    // Removing a sandbox with force cancels its jobs not started yet before the running ones end.
    this.live = opts.runs.of<LiveJob>("job", { endUnstartedIn: (sandboxId) => this.cancelUnstartedIn(sandboxId) });
    this.output = new JobOutputLog({
      store: this.rows,
      ...(opts.outputBudgetBytes !== undefined && { budgetBytes: opts.outputBudgetBytes }),
      ...(opts.outputFlushMs !== undefined && { flushMs: opts.outputFlushMs }),
      onFlushed: (ids) => this.notify(ids),
      log: this.log,
    });
  }

  /** False once shutdown began: nothing new is admitted or started. */
  get accepting(): boolean {
    return this.runs.accepting;
  }

  /** Gone with a simulated crash: nothing is stored or waited for any more. */
  private get abandoned(): boolean {
    return this.runs.abandoned;
  }

  /** Jobs not ended (queued, waiting, running, being cancelled), in every sandbox. */
  get unfinishedCount(): number {
    if (this.rows.isClosed || this.abandoned) return 0;
    return this.rows.countAllUnfinished();
  }

  unfinishedIn(sandboxId: string): number {
    return this.rows.countUnfinished(sandboxId);
  }

  get(jobId: string): JobRow | null {
    return this.rows.getJob(jobId) ?? null;
  }

  /**
   * Admits a validated submission, or finds it admitted before (`replayed`: nothing
   * new runs). `onAdmit` runs inside the admission transaction. Refused as not_started
   * (runs/admission.ts) when it cannot be stored or the backend shuts down.
   */
  submit(
    sandbox: SandboxRow,
    req: JobSubmitRequest,
    onAdmit?: () => void,
  ): { answer: JobSubmitAnswer; replayed: boolean } {
    this.runs.requireAccepting();
    const sandboxId = sandbox.sandbox_id;
    const sub = normalizeSubmission(sandboxId, req);
    const now = new Date(this.now()).toISOString();
    const verdict = storeAdmission(this.rows, "jobs", () => {
      const judged = judgeSubmission(sub, {
        request: this.rows.getRequest(sandboxId, sub.requestId),
        job: (id) => this.rows.getJob(id),
      });
      if (judged === "new") {
        this.rows.insertRequest({
          sandbox_id: sandboxId,
          request_id: sub.requestId,
          digest: sub.digest,
          created_at: now,
        });
        for (const job of sub.jobs) {
          this.rows.insertJob({
            job_id: job.jobId,
            sandbox_id: sandboxId,
            request_id: sub.requestId,
            job_index: job.index,
            name: job.name,
            digest: job.digest,
            command: JSON.stringify(job.command),
            working_dir: job.workingDir,
            env: JSON.stringify(job.env),
            stdin: job.stdin === null ? null : Buffer.from(job.stdin, "base64"),
            timeout_ms: job.timeoutMs,
            depends_on: JSON.stringify(job.dependsOn),
            dependency_ids: JSON.stringify(job.dependencyIds),
            dependency_policy: job.policy,
            queue_key: job.queueKey,
            status: job.dependencyIds.length > 0 ? "waiting" : "queued",
            created_at: now,
          });
        }
      }
      onAdmit?.();
      return judged;
    });
    if (verdict === "new") {
      this.log(`jobs: request ${sub.requestId} admitted ${sub.jobs.length} job(s) in sandbox ${sandbox.name}`);
      this.schedule();
    }
    return { answer: this.answerFor(sandboxId, sub.requestId)!, replayed: verdict === "same" };
  }

  /** The jobs a request admitted, as they are now; null when the request is unknown. */
  answerFor(sandboxId: string, requestId: string): JobSubmitAnswer | null {
    const jobs = this.rows.jobsOfRequest(sandboxId, requestId);
    if (jobs.length === 0) return null;
    return { request_id: requestId, sandbox_id: sandboxId, jobs: jobs.map(submitItem) };
  }

  list(sandboxId: string, filter: JobFilter): JobSummary[] {
    return this.rows.listJobs(sandboxId, filter).map(toJobSummary);
  }

  /** The job with its kept output after `afterSeq`, up to `limitBytes` of it (0: none). */
  record(row: JobRow, afterSeq: number, limitBytes: number): JobRecord {
    const chunks = limitBytes > 0 ? this.rows.readOutput(row.job_id, afterSeq, limitBytes) : [];
    return {
      ...toJobSummary(row),
      output: chunks.map((c) => ({
        seq: c.seq,
        stream: c.stream,
        offset: c.byte_offset,
        data: Buffer.from(c.data).toString("base64"),
      })),
      output_next_seq: chunks.length > 0 ? chunks[chunks.length - 1]!.seq : afterSeq,
    };
  }

  /** Resolves when any of the jobs changes (status or output), after `ms`, or on abort. */
  waitForChange(jobIds: readonly string[], ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0 || signal?.aborted || this.abandoned) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => wake(), ms);
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", wake);
        for (const id of jobIds) this.waiters.get(id)?.delete(wake);
        resolve();
      };
      for (const id of jobIds) {
        let set = this.waiters.get(id);
        if (!set) {
          set = new Set();
          this.waiters.set(id, set);
        }
        set.add(wake);
      }
      signal?.addEventListener("abort", wake, { once: true });
    });
  }

  /**
   * Cancels a job, and with `dependents` every job depending on it: one that has not
   * started ends `cancelled` now; a running one becomes `cancel_requested`, its group
   * gets TERM, then KILL after the grace, and it ends `cancelled` once the group is gone.
   */
  cancel(row: JobRow, dependents: boolean): JobCancelAnswer {
    const others = dependents
      ? transitiveDependents(row.job_id, this.rows.jobsOfRequest(row.sandbox_id, row.request_id).map(planJobOf))
      : [];
    const now = new Date(this.now()).toISOString();
    const toEnd: string[] = [];
    this.rows.transaction(() => {
      for (const id of [row.job_id, ...others]) {
        const current = this.rows.getJob(id);
        if (!current) continue;
        if (current.status === "queued" || current.status === "waiting") {
          this.rows.updateJob(id, {
            status: "cancelled",
            cancel_requested: 1,
            error: "cancelled before it started",
            finished_at: now,
          });
        } else if (current.status === "running") {
          this.rows.updateJob(id, { status: "cancel_requested", cancel_requested: 1 });
          toEnd.push(id);
        }
      }
    });
    this.log(`job ${row.job_id}: cancel requested${others.length ? ` with ${others.length} dependent(s)` : ""}`);
    for (const id of toEnd) this.live.get(id)?.run.end("cancelled");
    this.notify([row.job_id, ...others]);
    this.schedule();
    this.onSettled();
    return {
      job_id: row.job_id,
      status: this.rows.getJob(row.job_id)!.status,
      dependents: others.map((id) => submitItem(this.rows.getJob(id)!)),
    };
  }

  /**
   * Cancels the jobs of a sandbox that have not started (queued, waiting): they end
   * `cancelled` now (sandbox rm --force, before its running jobs are ended).
   */
  private cancelUnstartedIn(sandboxId: string): number {
    const now = new Date(this.now()).toISOString();
    const ids = this.rows
      .unfinishedJobs()
      .filter((r) => r.sandbox_id === sandboxId && (r.status === "queued" || r.status === "waiting"))
      .map((r) => r.job_id);
    if (ids.length === 0) return 0;
    this.rows.transaction(() => {
      for (const id of ids) {
        this.rows.updateJob(id, {
          status: "cancelled",
          cancel_requested: 1,
          error: "cancelled before it started",
          finished_at: now,
        });
      }
    });
    this.log(`jobs: ${ids.length} job(s) of sandbox ${sandboxId} cancelled before they started`);
    this.notify(ids);
    this.onSettled();
    return ids.length;
  }

  /**
   * At start-up: what an earlier run of the backend left running is settled
   * (recovery.ts: never resumed), then queued jobs start.
   */
  recover(): { interrupted: number; lost: number; wrappedUp: number } {
    const counts = recoverJobs({ rows: this.rows, sandboxes: this.sandboxes, now: this.now, log: this.log });
    this.schedule();
    return counts;
  }

  /** Once the running jobs ended at shutdown (LiveRuns.shutdown, as `interrupted`): flushes output, answers waiting reads. */
  closeAfterShutdown(): void {
    this.output.flush();
    // Reads waiting for jobs that will not move now get their answers.
    for (const set of this.waiters.values()) for (const wake of [...set]) wake();
  }

  /** Once the running jobs were abandoned (LiveRuns.abandon, a simulated crash): drops unwritten output, answers waiting reads. */
  dropAfterCrash(): void {
    this.output.abandon();
    for (const set of this.waiters.values()) for (const wake of [...set]) wake();
  }

  /** Moves waiting jobs on and starts what may start now (schedule.ts). */
  private schedule(): void {
    if (!this.accepting || this.rows.isClosed) return;
    const unfinished = this.rows.unfinishedJobs();
    const known = new Map(unfinished.map((r) => [r.job_id, r]));
    // Dependencies that ended are needed too, for their statuses.
    for (const row of unfinished) {
      for (const id of JSON.parse(row.dependency_ids) as string[]) {
        if (!known.has(id)) {
          const dep = this.rows.getJob(id);
          if (dep) known.set(id, dep);
        }
      }
    }
    const plan = planJobs([...known.values()].map(planJobOf), this.concurrency);
    if (plan.changes.length === 0 && plan.start.length === 0) return;
    const now = new Date(this.now()).toISOString();
    const status = new Map([...known.values()].map((r) => [r.job_id, r.status]));
    for (const c of plan.changes) status.set(c.id, c.status);
    this.rows.transaction(() => {
      for (const change of plan.changes) {
        if (change.status === "queued") {
          this.rows.updateJob(change.id, { status: "queued" });
          continue;
        }
        const failed = change.failedDependencies.map(
          (id) => `${JSON.stringify(known.get(id)?.name ?? id)} ended ${status.get(id) ?? "lost"}`,
        );
        this.rows.updateJob(change.id, {
          status: "dependency_failed",
          error: `not run: dependency ${failed.join(", ")}`,
          finished_at: now,
        });
      }
      // Committed before the command starts: a crash after this never runs it again.
      for (const id of plan.start) this.rows.updateJob(id, { status: "running", started_at: now });
    });
    for (const id of plan.start) this.start(known.get(id)!);
    this.notify(plan.changes.map((c) => c.id).concat(plan.start));
    if (plan.changes.some((c) => c.status === "dependency_failed")) this.onSettled();
  }

  private start(row: JobRow): void {
    let place: { workspaceDir: string; cwd: string };
    try {
      place = this.sandboxes.workspaceCwd(row.sandbox_id, row.working_dir);
    } catch (err) {
      this.endUnstarted(row, `could not prepare its workspace: ${(err as Error).message}`);
      return;
    }
    const confined = confineToWorkspace(place.workspaceDir, place.cwd);
    const cwdProblem =
      confined.problem === "outside"
        ? `working directory ${row.working_dir} leads outside ${WORKSPACE}; not started`
        : confined.problem === "missing"
          ? `working directory ${row.working_dir} does not exist`
          : undefined;
    const cwd = confined.cwd ?? place.cwd;
    const command = JSON.parse(row.command) as string[] | string;
    const sandbox = this.sandboxes.byId(row.sandbox_id);
    if (!sandbox) {
      this.endUnstarted(row, "its sandbox is gone");
      return;
    }
    const driver = this.sandboxes.driver(sandbox);
    const placement = this.sandboxes.placement(sandbox);
    const writer = this.output.open(row.job_id);
    let run: JobRun;
    try {
      run = new JobRun({
        driver,
        placement,
        argv: typeof command === "string" ? ["/bin/sh", "-c", command] : command,
        cwd,
        env: commandEnvironment(
          driver,
          placement,
          { kind: "job", id: row.job_id },
          cwd,
          JSON.parse(row.env) as Record<string, string>,
        ),
        stdin: row.stdin === null ? null : Buffer.from(row.stdin),
        timeoutMs: row.timeout_ms,
        killGraceMs: this.killGraceMs,
        now: this.now,
        ...(cwdProblem !== undefined && { cwdProblem }),
        onOutput: (stream, chunk) => writer.push(stream, chunk),
        onMainExit: (end) => this.mainExited(row.job_id, end),
      });
    } catch (err) {
      this.output.forget(row.job_id);
      this.endUnstarted(row, `could not start it: ${(err as Error).message}`);
      return;
    }
    const settled = run.done.then((result) => this.settle(row.job_id, result));
    this.live.set(row.job_id, {
      run,
      writer,
      settled,
      sandboxId: row.sandbox_id,
      end: (reason: EndReason) => {
        if (reason === "shutdown") run.end("shutdown");
        else {
          const current = this.rows.getJob(row.job_id);
          if (current) this.cancel(current, false);
        }
        return settled;
      },
      abandon: () => run.abandon(),
    });
    this.patch(row.job_id, {
      started_at: run.startedAt.toISOString(),
      pgid: run.pgid,
      pgid_start_time: run.pgidStartTime,
      boot_id: run.bootId,
    });
    this.log(`job ${row.job_id} (${row.name}) of request ${row.request_id}: started`);
  }

  /** Recorded as soon as it is known: a crash while the run is wrapped up keeps the job's status. */
  private mainExited(jobId: string, end: RunEnd): void {
    this.patch(jobId, {
      exit_code: end.exitCode,
      signal: end.signal,
      end_intent: end.ending,
      end_reason: end.endReason ?? null,
      usage: end.usage == null ? null : JSON.stringify(end.usage),
      main_exited_at: new Date(this.now()).toISOString(),
    });
  }

  private settle(jobId: string, result: JobRunResult): void {
    const entry = this.live.get(jobId);
    if (!entry || this.abandoned || this.rows.isClosed) return;
    this.live.delete(jobId);
    const row = this.rows.getJob(jobId)!;
    const { status, error } = statusOfRun(result, row.timeout_ms);
    try {
      this.rows.transaction(() => {
        this.output.closeInTransaction(jobId);
        this.rows.updateJob(jobId, {
          status,
          error,
          exit_code: result.exitCode,
          signal: result.signal,
          end_intent: result.ending,
          end_reason: result.endReason ?? null,
          usage: result.usage == null ? null : JSON.stringify(result.usage),
          leftover_processes: JSON.stringify(result.leftovers),
          finished_at: result.finishedAt.toISOString(),
        });
      });
    } catch (err) {
      this.log(`job ${jobId}: could not store its end: ${(err as Error).message}`);
    }
    const exit = result.signal ?? `exit ${result.exitCode}`;
    this.log(
      `job ${jobId} (${row.name}): ${status} (${exit})${describeLeftovers({ leftover_processes: JSON.stringify(result.leftovers) })}`,
    );
    this.notify([jobId]);
    this.schedule();
    this.onSettled();
  }

  /** A job that could not be started at all ends `failed` with the reason. */
  private endUnstarted(row: JobRow, why: string): void {
    this.patch(row.job_id, { status: "failed", error: why, finished_at: new Date(this.now()).toISOString() });
    this.log(`job ${row.job_id} (${row.name}): failed: ${why}`);
    this.notify([row.job_id]);
    queueMicrotask(() => this.schedule());
  }

  private patch(jobId: string, patch: JobPatch): void {
    if (this.rows.isClosed || this.abandoned) return;
    try {
      this.rows.transaction(() => this.rows.updateJob(jobId, patch));
    } catch (err) {
      this.log(`job ${jobId}: could not store its state: ${(err as Error).message}`);
    }
  }

  private notify(jobIds: readonly string[]): void {
    for (const id of jobIds) {
      const set = this.waiters.get(id);
      if (!set) continue;
      this.waiters.delete(id);
      for (const wake of set) wake();
    }
  }
}

function planJobOf(row: JobRow): PlanJob {
  return {
    id: row.job_id,
    seq: row.seq,
    sandboxId: row.sandbox_id,
    status: row.status,
    dependencyIds: JSON.parse(row.dependency_ids) as string[],
    policy: row.dependency_policy,
    queueKey: row.queue_key,
  };
}

function submitItem(row: JobRow): JobSubmitItem {
  return { job_id: row.job_id, name: row.name, status: row.status };
}
