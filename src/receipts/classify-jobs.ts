// What a look at a request's jobs means for its receipt (docs/classification.md, "Jobs").
// A `jobs run` receipt (kind jobs_run) settles to its one job's outcome, as an exec's
// does; a `jobs submit` receipt (kind jobs_submit) is `admitted`, and carries each job's
// outcome as an observation of its own once known. A job the backend lost (interrupted,
// lost) leaves either in doubt. Pure: table-tested in test/unit/classify-jobs.test.ts.

import { blank, usageText } from "./blank.js";
import type { Classified, RequestKind } from "./classify.js";
import { JOB_ERROR_SANDBOX_START_FAILED, TERMINAL_JOB_STATUSES } from "../protocol/jobs.js";
import type { Outcome } from "../protocol/types.js";

/** The receipt kinds of a submission of jobs. */
export type JobsKind = "jobs_submit" | "jobs_run";

export function isJobsKind(kind: RequestKind): kind is JobsKind {
  return kind === "jobs_submit" || kind === "jobs_run";
}

/** What a job record says, as far as its receipt needs it (as the wire has it). */
export interface JobSeen {
  job_id: string;
  name?: string;
  status: string;
  exit_code: number | null;
  signal: string | null;
  error: string | null;
  /** What the job used (docs/operations.md), once it ended. */
  usage?: unknown;
}

/** Error codes of a receipt whose job the backend lost: waiting again teaches nothing. */
export const JOB_INTERRUPTED = "job_interrupted";
export const JOB_LOST = "job_lost";

const IN_DOUBT = ["interrupted", "lost"];

/** Whether a job's status is one it ends in; a status this sbx does not know is not. */
function ended(status: string): boolean {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

/** Reads the jobs of a documented answer body (`{request_id, jobs: […]}`); null when it is not one. */
export function jobsOfBody(doc: unknown): JobSeen[] | null {
  const jobs = typeof doc === "object" && doc !== null ? (doc as { jobs?: unknown }).jobs : undefined;
  if (!Array.isArray(jobs) || jobs.length === 0) return null;
  const seen: JobSeen[] = [];
  for (const j of jobs) {
    if (typeof j !== "object" || j === null) return null;
    const r = j as Record<string, unknown>;
    if (typeof r.job_id !== "string" || typeof r.status !== "string") return null;
    seen.push({
      job_id: r.job_id,
      ...(typeof r.name === "string" && { name: r.name }),
      status: r.status,
      exit_code: typeof r.exit_code === "number" ? r.exit_code : null,
      signal: typeof r.signal === "string" ? r.signal : null,
      error: typeof r.error === "string" ? r.error : null,
    });
  }
  return seen;
}

function blankFor(requestId: string, httpStatus: number | null): Classified {
  return { ...blank(), request_id: requestId, http_status: httpStatus };
}

function jobText(j: JobSeen): string {
  return j.name ? `job ${j.name} (${j.job_id})` : `job ${j.job_id}`;
}

/** The outcome an execution with this job's end would have. */
function outcomeOf(j: JobSeen): Outcome {
  if (!ended(j.status)) return "pending";
  if (j.status === "succeeded" || j.status === "timed_out" || j.status === "cancelled") return j.status;
  if (j.status === "failed" || j.status === "dependency_failed") return "failed";
  return "unknown";
}

/** A lost job's doubt, as the receipt's error. */
function doubtOf(jobs: readonly JobSeen[]): { code: string; message: string } | null {
  const lost = jobs.find((j) => IN_DOUBT.includes(j.status));
  if (!lost) return null;
  return {
    code: lost.status === "lost" ? JOB_LOST : JOB_INTERRUPTED,
    message: `${jobText(lost)} was ${lost.status} (the backend stopped while it ran): it may have done part of its work`,
  };
}

/** A jobs_run receipt's classification from its one job (as an exec's from its record). */
function runVerdict(c: Classified, j: JobSeen): Classified {
  c.job_id = j.job_id;
  c.usage = usageText(j.usage);
  c.outcome = outcomeOf(j);
  c.exit_code = j.exit_code;
  c.signal = j.signal;
  if (!ended(j.status)) {
    c.classification = "running";
    return c;
  }
  const doubt = doubtOf([j]);
  if (doubt) {
    c.classification = "outcome_unknown";
    c.error = doubt;
    return c;
  }
  c.definitive = true;
  if (j.error?.startsWith(JOB_ERROR_SANDBOX_START_FAILED)) {
    // Its sandbox could not be set up: the command never ran.
    c.classification = "rejected";
    c.error = {
      code: JOB_ERROR_SANDBOX_START_FAILED.replace(/: $/, ""),
      message: j.error.slice(JOB_ERROR_SANDBOX_START_FAILED.length),
    };
    return c;
  }
  if (j.error !== null) c.error = { code: `job_${j.status}`, message: j.error };
  if (j.status === "succeeded") c.classification = "succeeded";
  else if (j.status === "timed_out" || j.status === "cancelled") c.classification = j.status;
  else c.classification = "failed";
  return c;
}

/**
 * A submission's classification from all its jobs as last read: `admitted`, settled
 * (definitive) once every job ended; in doubt (`outcome_unknown`) when one was lost.
 */
function submitVerdict(c: Classified, jobs: readonly JobSeen[]): Classified {
  const allEnded = jobs.every((j) => ended(j.status));
  const doubt = doubtOf(jobs);
  c.outcome = allEnded ? (doubt ? "unknown" : null) : "pending";
  if (doubt) {
    c.classification = "outcome_unknown";
    c.error = doubt;
    return c;
  }
  c.classification = "admitted";
  c.definitive = allEnded;
  return c;
}

/**
 * The receipt's verdict on a read (or an answer) listing its jobs: for jobs_run, of
 * its one job (the row carries that job); for jobs_submit, of them all (no job of its own).
 */
export function jobsVerdict(
  kind: JobsKind,
  requestId: string,
  jobs: readonly JobSeen[],
  httpStatus: number | null,
): Classified {
  const c = blankFor(requestId, httpStatus);
  return kind === "jobs_run" && jobs.length === 1 ? runVerdict(c, jobs[0]!) : submitVerdict(c, jobs);
}

/**
 * What a receipt records of one look at its jobs: for jobs_run, the verdict (it carries
 * the job); for jobs_submit, one row per job that ended since last recorded (each with
 * that job's outcome and the submission's verdict), then the verdict itself, so that the
 * verdict stays the receipt's deciding observation. `recorded` names jobs whose end the
 * receipt holds already ("job_id:outcome").
 */
export function jobsObservations(
  kind: JobsKind,
  requestId: string,
  jobs: readonly JobSeen[],
  httpStatus: number | null,
  recorded: ReadonlySet<string> = new Set(),
): Classified[] {
  const verdict = jobsVerdict(kind, requestId, jobs, httpStatus);
  if (kind === "jobs_run" && jobs.length === 1) return [verdict];
  const rows: Classified[] = [];
  for (const j of jobs) {
    if (!ended(j.status) || recorded.has(`${j.job_id}:${outcomeOf(j)}`)) continue;
    rows.push({
      ...verdict,
      definitive: false,
      job_id: j.job_id,
      outcome: outcomeOf(j),
      exit_code: j.exit_code,
      signal: j.signal,
      usage: usageText(j.usage),
      error: j.error === null ? verdict.error : { code: `job_${j.status}`, message: j.error },
    });
  }
  return [...rows, verdict];
}
