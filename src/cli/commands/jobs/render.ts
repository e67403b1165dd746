// Jobs for people: a table (cli-table3 on a terminal, tab-separated rows in a pipe)
// with statuses in colour, and the one-line summary of a wait.

import type { ChalkInstance } from "chalk";
import type { JobStatus, JobSummary } from "../../../protocol/jobs.js";
import type { IO } from "../../io/io.js";
import { formatTime, printTable } from "../../render/table.js";
import { IN_DOUBT_JOB_STATUSES } from "./outcome.js";

export function colorStatus(chalk: ChalkInstance, status: JobStatus): string {
  if (status === "succeeded") return chalk.green(status);
  if (IN_DOUBT_JOB_STATUSES.includes(status)) return chalk.yellow(status);
  if (status === "running" || status === "cancel_requested") return chalk.cyan(status);
  if (status === "queued" || status === "waiting") return status;
  return chalk.red(status);
}

export function exitText(job: Pick<JobSummary, "exit_code" | "signal">): string {
  return job.signal ?? (job.exit_code === null ? "-" : String(job.exit_code));
}

export async function printJobs(
  io: IO,
  jobs: readonly (JobSummary & { sandbox?: string })[],
  opts: { request?: boolean; sandbox?: boolean } = {},
): Promise<void> {
  await printTable(
    io,
    [
      ...(opts.sandbox ? ["SANDBOX"] : []),
      "JOB",
      "NAME",
      "STATUS",
      "EXIT",
      ...(opts.request ? ["REQUEST"] : []),
      "QUEUE",
      "STARTED",
      "NOTE",
    ],
    jobs.map((j) => [
      ...(opts.sandbox ? [j.sandbox ?? "-"] : []),
      j.job_id,
      j.name,
      colorStatus(io.chalk, j.status),
      exitText(j),
      ...(opts.request ? [j.request_id] : []),
      j.queue_key ?? "-",
      formatTime(io, j.started_at),
      noteOf(j),
    ]),
    { shrink: "NOTE" },
  );
}

/** Why it ended as it did, and what its main process left behind. */
export function noteOf(j: Pick<JobSummary, "error" | "leftover_processes">): string {
  const left =
    j.leftover_processes.length > 0 ? `killed what it left running: ${j.leftover_processes.join(", ")}` : null;
  return [j.error, left].filter((s) => s !== null).join("; ") || "-";
}

/** "3 jobs: 1 running, 2 queued" */
export function countsText(jobs: readonly Pick<JobSummary, "status">[]): string {
  const counts = new Map<string, number>();
  for (const j of jobs) counts.set(j.status, (counts.get(j.status) ?? 0) + 1);
  const parts = [...counts].map(([s, n]) => `${n} ${s}`);
  return `${jobs.length} job${jobs.length === 1 ? "" : "s"}: ${parts.join(", ")}`;
}
