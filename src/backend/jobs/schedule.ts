// Job scheduling as pure functions (table-tested in test/backend/job-schedule.test.ts):
// whether a job's dependencies let it run, which jobs move on and which start now
// (the per-sandbox concurrency limit and queue keys), what a cancel with dependents
// reaches, and the status a run's end gives. No I/O: the manager feeds them rows.

import { JOB_ERROR_SANDBOX_START_FAILED } from "../../protocol/jobs.js";
import { type DependencyPolicy, isTerminalJobStatus, type JobStatus } from "../../protocol/jobs.js";
import type { CommandUsage, EndReason } from "../../protocol/types.js";

export type DependencyVerdict = "wait" | "ready" | "dependency_failed";

/**
 * `all_succeeded`: ready once every dependency succeeded; dependency_failed as soon as
 * one ended otherwise. `all_terminal`: ready once every dependency ended, however.
 */
export function resolveDependencies(policy: DependencyPolicy, dependencies: readonly JobStatus[]): DependencyVerdict {
  if (policy === "all_succeeded") {
    if (dependencies.some((s) => isTerminalJobStatus(s) && s !== "succeeded")) return "dependency_failed";
    return dependencies.every((s) => s === "succeeded") ? "ready" : "wait";
  }
  return dependencies.every(isTerminalJobStatus) ? "ready" : "wait";
}

export interface PlanJob {
  id: string;
  /** Acceptance order (across requests). */
  seq: number;
  sandboxId: string;
  status: JobStatus;
  dependencyIds: readonly string[];
  policy: DependencyPolicy;
  queueKey: string | null;
}

export interface PlanChange {
  id: string;
  status: "queued" | "dependency_failed";
  /** For dependency_failed: the dependencies that did not succeed. */
  failedDependencies: string[];
}

export interface Plan {
  changes: PlanChange[];
  /** Queued jobs to start now, in acceptance order. */
  start: string[];
}

/**
 * What happens next, given the unfinished jobs and (any status) their dependencies:
 * `waiting` jobs whose dependencies allow it become `queued` (or end
 * `dependency_failed`, which may in turn decide their dependents); then queued jobs
 * start in acceptance order while their sandbox runs fewer than `concurrency` jobs
 * and no job of their sandbox with the same queue key runs or was accepted before
 * them and still waits for a slot. A job waiting for its dependencies does not hold
 * its queue key.
 */
export function planJobs(jobs: readonly PlanJob[], concurrency: number): Plan {
  const ordered = [...jobs].sort((a, b) => a.seq - b.seq);
  const status = new Map(ordered.map((j) => [j.id, j.status]));
  const changes = new Map<string, PlanChange>();
  // Until nothing moves: an ended dependency may decide a chain of dependents.
  for (let moved = true; moved; ) {
    moved = false;
    for (const job of ordered) {
      if (status.get(job.id) !== "waiting") continue;
      // A dependency the scheduler does not know cannot have succeeded.
      const deps = job.dependencyIds.map((id) => status.get(id) ?? "lost");
      const verdict = resolveDependencies(job.policy, deps);
      if (verdict === "wait") continue;
      const next = verdict === "ready" ? "queued" : "dependency_failed";
      const failedDependencies =
        next === "dependency_failed" ? job.dependencyIds.filter((_id, i) => deps[i] !== "succeeded") : [];
      status.set(job.id, next);
      changes.set(job.id, { id: job.id, status: next, failedDependencies });
      moved = true;
    }
  }
  const running = new Map<string, number>();
  const heldKeys = new Set<string>();
  const keyOf = (j: PlanJob) => (j.queueKey === null ? null : JSON.stringify([j.sandboxId, j.queueKey]));
  for (const job of ordered) {
    const s = status.get(job.id);
    if (s !== "running" && s !== "cancel_requested") continue;
    running.set(job.sandboxId, (running.get(job.sandboxId) ?? 0) + 1);
    const key = keyOf(job);
    if (key !== null) heldKeys.add(key);
  }
  const start: string[] = [];
  for (const job of ordered) {
    if (status.get(job.id) !== "queued") continue;
    const key = keyOf(job);
    const busy = (running.get(job.sandboxId) ?? 0) >= concurrency;
    const keyHeld = key !== null && heldKeys.has(key);
    // Either way a later job with this key must wait behind this one.
    if (key !== null) heldKeys.add(key);
    if (busy || keyHeld) continue;
    start.push(job.id);
    running.set(job.sandboxId, (running.get(job.sandboxId) ?? 0) + 1);
  }
  return { changes: [...changes.values()], start };
}

/** Every job that depends on `id`, directly or through others, in acceptance order. */
export function transitiveDependents(id: string, jobs: readonly PlanJob[]): string[] {
  const found = new Set<string>();
  for (let frontier = [id]; frontier.length > 0; ) {
    const next: string[] = [];
    for (const job of jobs) {
      if (found.has(job.id) || job.id === id) continue;
      if (job.dependencyIds.some((d) => frontier.includes(d))) {
        found.add(job.id);
        next.push(job.id);
      }
    }
    frontier = next;
  }
  return [...jobs]
    .sort((a, b) => a.seq - b.seq)
    .filter((j) => found.has(j.id))
    .map((j) => j.id);
}

/** Why a run was ended by the backend rather than by itself. */
export type RunEnding = "timed_out" | "cancelled" | "shutdown";

export interface RunEnd {
  exitCode: number | null;
  signal: string | null;
  ending: RunEnding | null;
  /** The sandbox could not be set up: the command never ran (why). Absent or null: it ran. */
  startFailure?: string | null;
  /** Why the command ended beyond its exit (`out_of_memory`: its sandbox's memory limit). Absent or null: nothing more. */
  endReason?: EndReason | null;
  /** What the command used (docs/operations.md); absent or null: not known (it never started). */
  usage?: CommandUsage | null;
  /** Where it ran failed under it (a Slurm node), naming it: interrupted. Absent or null: it did not. */
  interrupted?: string | null;
}

/**
 * The status a run's end gives: ended at its timeout, cancelled, or by a backend
 * shutting down (interrupted: never resumed); otherwise its exit (0 succeeded, else
 * failed); with no exit status at all, lost.
 */
export function statusOfRun(end: RunEnd, timeoutMs: number): { status: JobStatus; error: string | null } {
  switch (end.ending) {
    case "timed_out":
      return { status: "timed_out", error: `killed at its timeout (${timeoutMs} ms)` };
    case "cancelled":
      return { status: "cancelled", error: null };
    case "shutdown":
      return { status: "interrupted", error: "the backend shut down while it ran; it was not resumed" };
  }
  if (end.interrupted) return { status: "interrupted", error: end.interrupted };
  if (end.startFailure) {
    return {
      status: "failed",
      error: `${JOB_ERROR_SANDBOX_START_FAILED}the sandbox could not be set up: ${end.startFailure}`,
    };
  }
  if (end.exitCode === null && end.signal === null) {
    return { status: "lost", error: "it ended without an exit status" };
  }
  if (end.endReason === "out_of_memory") {
    return { status: "failed", error: "out_of_memory: killed by the kernel at its sandbox's memory limit" };
  }
  return { status: end.exitCode === 0 ? "succeeded" : "failed", error: null };
}
