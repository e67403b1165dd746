// Restart recovery of jobs: what an earlier run of the backend left running is never
// resumed. Its group is ended when it is still ours (runs/: the recovery every run
// shares), and its end is what can be known of it: `interrupted`, the status its main
// process had recorded, or `lost` (docs/protocol.md, "Jobs"). Queued jobs stay queued.

import { type FoundGroup, recoverLeftRuns } from "../runs/index.js";
import type { SandboxRegistry } from "../sandboxes/index.js";
import { type RunEnd, type RunEnding, statusOfRun } from "./schedule.js";
import type { JobPatch, JobRow, JobStore } from "./store.js";

export interface RecoveryDeps {
  rows: JobStore;
  sandboxes: SandboxRegistry;
  now: () => number;
  log: (line: string) => void;
}

/**
 * At start-up: jobs an earlier run of the backend left running are never resumed.
 * One whose main process still ran has its group killed and is `interrupted`; one
 * whose main process had exited with its status recorded ends with that status;
 * one whose process vanished without an exit status is `lost`. What a vanished
 * main process left behind is killed and named.
 */
export function recoverJobs(deps: RecoveryDeps): { interrupted: number; lost: number; wrappedUp: number } {
  const counts = { interrupted: 0, lost: 0, wrappedUp: 0 };
  const now = new Date(deps.now()).toISOString();
  recoverLeftRuns({
    kind: "job",
    left: deps.rows.unfinishedJobs().filter((row) => row.status === "running" || row.status === "cancel_requested"),
    label: (row) => `${row.job_id} (${row.name})`,
    pgid: (row) => row.pgid,
    nameLeftBehind: true,
    settle: (row, found) => {
      const patch = endOf(row, found, deps.sandboxes);
      counts[row.main_exited_at !== null ? "wrappedUp" : patch.status === "lost" ? "lost" : "interrupted"]++;
      deps.rows.transaction(() => deps.rows.updateJob(row.job_id, { ...patch, finished_at: now }));
      return `${patch.status}${describeLeftovers(patch)}`;
    },
    log: deps.log,
  });
  return counts;
}

/** A job's end from what is recorded of it and what was found of its group. */
function endOf(row: JobRow, found: FoundGroup | null, sandboxes: SandboxRegistry): JobPatch {
  const leftBehind = found?.ours && found.running ? found.leftBehind : [];
  if (row.main_exited_at !== null) {
    const end: RunEnd = {
      exitCode: row.exit_code,
      signal: row.signal,
      ending: row.end_intent as RunEnding | null,
      endReason: row.end_reason,
    };
    return { ...statusOfRun(end, row.timeout_ms), leftover_processes: JSON.stringify(leftBehind) };
  }
  if (found === null) {
    return { status: "lost", error: "the backend stopped while starting it; whether its command started is not known" };
  }
  if (found.ours && found.running && found.leaderAlive) {
    return {
      status: "interrupted",
      error: "the backend stopped while it ran; its processes were killed when the backend started again",
    };
  }
  const sandbox = sandboxes.byId(row.sandbox_id);
  if (sandbox !== undefined && sandboxes.driver(sandbox).runsEndWithBackend) {
    // Its sandbox cannot outlive the backend (bwrap): the backend's end was its end.
    return { status: "interrupted", error: "the backend stopped while it ran; its sandbox ended with it" };
  }
  if (!found.ours) return { status: "lost", error: `the backend lost it; ${found.why}` };
  return {
    status: "lost",
    error: "its process ended while the backend was down; its exit status is not known",
    leftover_processes: JSON.stringify(leftBehind),
  };
}

export function describeLeftovers(patch: JobPatch): string {
  const names = JSON.parse(patch.leftover_processes ?? "[]") as string[];
  return names.length === 0
    ? ""
    : `; killed ${names.length} process(es) its main process left behind (${names.join(", ")})`;
}
