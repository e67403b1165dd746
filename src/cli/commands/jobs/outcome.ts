// What jobs' statuses mean for sbx's exit code, and the documented --json of a
// submission (submit, run). Pure: table-tested in test/unit/jobs-outcome.test.ts.

import { JOB_ERROR_SANDBOX_START_FAILED, type JobStatus, type JobSummary } from "../../../protocol/jobs.js";
import { signalNumber } from "../../../receipts/classify.js";
import { ExitCodes, signalExitCode } from "../../../common/exit-codes.js";

/** Statuses that leave a person in doubt: the backend lost the job (it may have done part of its work). */
export const IN_DOUBT_JOB_STATUSES: readonly JobStatus[] = ["interrupted", "lost"];
const FAILED: readonly JobStatus[] = ["failed", "cancelled", "timed_out", "dependency_failed"];

/** Why waiting for jobs stopped. */
export type JobsWaitEnd = "done" | "deadline" | "interrupted";

/**
 * `submit --wait` and `wait`: 0 when every job succeeded; 255 when any is interrupted
 * or lost (in doubt, it outranks a failure); 1 when any failed, was cancelled, timed out
 * or had a dependency fail; 124 when the local --timeout passed first; 130 on Ctrl-C.
 */
export function exitCodeForJobs(statuses: readonly JobStatus[], end: JobsWaitEnd): number {
  if (end === "interrupted") return ExitCodes.cancelled;
  if (end === "deadline") return ExitCodes.timedOut;
  if (statuses.some((s) => IN_DOUBT_JOB_STATUSES.includes(s))) return ExitCodes.inDoubt;
  if (statuses.some((s) => FAILED.includes(s))) return ExitCodes.jobFailed;
  return ExitCodes.ok;
}

/**
 * `jobs run`, like exec: the exit code, 128+S for a signal, 124 timed out, 130 cancelled,
 * 255 in doubt, 125 when its sandbox could not be set up (the command never ran).
 */
export function exitCodeForJob(job: Pick<JobSummary, "status" | "exit_code" | "signal" | "error">): number {
  switch (job.status) {
    case "succeeded":
      return ExitCodes.ok;
    case "failed": {
      if (job.error?.startsWith(JOB_ERROR_SANDBOX_START_FAILED)) return ExitCodes.usage;
      if (job.exit_code !== null && job.exit_code > 0 && job.exit_code <= 255) return job.exit_code;
      const n = job.signal === null ? null : signalNumber(job.signal);
      return n === null ? ExitCodes.jobFailed : signalExitCode(n);
    }
    case "timed_out":
      return ExitCodes.timedOut;
    case "cancelled":
      return ExitCodes.cancelled;
    case "dependency_failed":
      return ExitCodes.jobFailed;
    default:
      return ExitCodes.inDoubt;
  }
}

/** `submit --json` and `run --json`: the submission's receipt and its jobs as they are (or ended). */
export interface SubmissionDocument {
  receipt_id: string;
  request_id: string;
  sandbox_id: string;
  /** Of the submission (its receipt): `succeeded` means admitted. */
  classification: string;
  /** Why it was refused or is in doubt. */
  error: { code: string; message: string } | null;
  jobs: JobSummary[];
  /** The backend had admitted this request id with these jobs before: nothing new was admitted. */
  already_admitted: boolean;
  /** Whether sbx waited for the jobs to end. */
  waited: boolean;
  /** The local --timeout passed before they ended. */
  timed_out: boolean;
  exit: number;
}
