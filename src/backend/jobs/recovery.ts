// Restart recovery of jobs: what an earlier run of the backend left running is never
// resumed. Its group is ended when it is still there, and its end is what can be
// known of it: `interrupted`, the status its main process had recorded, or `lost`
// (docs/protocol.md, "Jobs").

import type { SandboxRegistry } from "../sandboxes/index.js";
import { endLostJobGroup } from "./job-run.js";
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
 * main process left behind is killed and named. Queued jobs then start.
 */
export function recoverJobs(deps: RecoveryDeps): { interrupted: number; lost: number; wrappedUp: number } {
  const counts = { interrupted: 0, lost: 0, wrappedUp: 0 };
  const now = new Date(deps.now()).toISOString();
  for (const row of deps.rows.unfinishedJobs()) {
    if (row.status !== "running" && row.status !== "cancel_requested") continue;
    let patch: JobPatch;
    if (row.main_exited_at !== null) {
      const killed = row.pgid === null ? [] : endLostJobGroup(recorded(row, row.pgid)).killed;
      const end: RunEnd = { exitCode: row.exit_code, signal: row.signal, ending: row.end_intent as RunEnding | null };
      patch = { ...statusOfRun(end, row.timeout_ms), leftover_processes: JSON.stringify(killed) };
      counts.wrappedUp++;
    } else if (row.pgid === null) {
      patch = {
        status: "lost",
        error: "the backend stopped while starting it; whether its command started is not known",
      };
      counts.lost++;
    } else {
      const group = endLostJobGroup(recorded(row, row.pgid));
      const sandbox = deps.sandboxes.byId(row.sandbox_id);
      const endedWithBackend = sandbox !== undefined && deps.sandboxes.driver(sandbox).runsEndWithBackend;
      if (group.mainAlive) {
        patch = {
          status: "interrupted",
          error: "the backend stopped while it ran; its processes were killed when the backend started again",
        };
        counts.interrupted++;
      } else if (endedWithBackend) {
        // Its sandbox cannot outlive the backend (bwrap): the backend's end was its end.
        patch = { status: "interrupted", error: "the backend stopped while it ran; its sandbox ended with it" };
        counts.interrupted++;
      } else if (group.leftAlone !== null) {
        patch = { status: "lost", error: `the backend lost it; ${group.leftAlone}` };
        counts.lost++;
      } else {
        patch = {
          status: "lost",
          error: "its process ended while the backend was down; its exit status is not known",
          leftover_processes: JSON.stringify(group.killed),
        };
        counts.lost++;
      }
    }
    deps.rows.transaction(() => deps.rows.updateJob(row.job_id, { ...patch, finished_at: now }));
    deps.log(`recovery: job ${row.job_id} (${row.name}): ${patch.status}${describeLeftovers(patch)}`);
  }
  return counts;
}

export function describeLeftovers(patch: JobPatch): string {
  const names = JSON.parse(patch.leftover_processes ?? "[]") as string[];
  return names.length === 0
    ? ""
    : `; killed ${names.length} process(es) its main process left behind (${names.join(", ")})`;
}

/** A job's process group as recorded, for restart recovery. */
function recorded(row: JobRow, pgid: number): { pgid: number; startTime: string | null; bootId: string | null } {
  return { pgid, startTime: row.pgid_start_time, bootId: row.boot_id };
}
