// Wire types of jobs (docs/protocol.md, "Jobs"): one-shot commands with dependencies,
// queue keys and idempotent admission by request id, and the checks of a submission
// that both sides make (the client before sending, the backend before admitting).

import { WORKSPACE } from "./types.js";
import {
  BASE64,
  checkCommand,
  checkEnv,
  type FieldProblem,
  isIntIn,
  isValidIdempotencyKey,
  isValidName,
  KNOWN_FIELDS,
  resolveWorkingDir,
} from "./validate.js";

const UNFINISHED = ["queued", "waiting", "running", "cancel_requested"] as const;
const TERMINAL = ["succeeded", "failed", "cancelled", "timed_out", "dependency_failed", "interrupted", "lost"] as const;
export const JOB_STATUSES_ALL = [...UNFINISHED, ...TERMINAL] as const;
export type JobStatus = (typeof JOB_STATUSES_ALL)[number];

/** Not ended: waiting for dependencies, for a run slot, running, or being cancelled. */
export const UNFINISHED_JOB_STATUSES: readonly JobStatus[] = UNFINISHED;
export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = TERMINAL;
export const JOB_STATUSES: readonly JobStatus[] = JOB_STATUSES_ALL;

export function isTerminalJobStatus(status: JobStatus): boolean {
  return TERMINAL_JOB_STATUSES.includes(status);
}

export const DEPENDENCY_POLICIES = ["all_succeeded", "all_terminal"] as const;
export type DependencyPolicy = (typeof DEPENDENCY_POLICIES)[number];

export const JOB_TIMEOUT_DEFAULT_MS = 1_800_000;
export const JOB_TIMEOUT_MAX_MS = 3_600_000;
/** Longest server-side wait of one read (GET …/jobs, GET …/jobs/{id}). */
export const JOB_WAIT_MAX_MS = 25_000;
/** Raw output bytes one GET …/jobs/{id} carries by default, and at most. */
export const JOB_OUTPUT_PAGE_DEFAULT = 1024 * 1024;
export const JOB_OUTPUT_PAGE_MAX = 4 * 1024 * 1024;
export const JOBS_PER_REQUEST_MAX = 256;
/** Job ids a client chooses: the characters of an idempotency key, at most this long. */
export const JOB_ID_MAX_LENGTH = 128;

export type {
  JobSpec,
  JobSubmitRequest,
  JobSubmitItem,
  JobSubmitAnswer,
  JobSummary,
  JobStream,
  JobOutputChunk,
  JobRecord,
  JobList,
  JobCancelRequest,
  JobCancelAnswer,
} from "./schemas/jobs.js";

import type { JobSpec } from "./schemas/jobs.js";

/** A problem of a submission: the field, and what names the jobs or dependencies concerned. */
export interface JobSubmitProblem extends FieldProblem {
  details?: Record<string, unknown>;
}

const REQUEST_FIELDS = new Set<string>(KNOWN_FIELDS.JobSubmitRequest);
const JOB_FIELDS = new Set<string>(KNOWN_FIELDS.JobSpec);

export function isValidJobId(id: string): boolean {
  return id.length <= JOB_ID_MAX_LENGTH && isValidIdempotencyKey(id);
}

/**
 * Validates a submission: its fields (unknown fields are refused: a misspelt
 * `depends_on` must not let a job run early), unique names and job ids, and the
 * dependency graph (unknown names and cycles). Returns the first problem, or null.
 */
export function checkJobSubmitRequest(body: unknown): JobSubmitProblem | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { field: "body", message: "body must be a JSON object {request_id, jobs: [...]}" };
  }
  const req = body as Record<string, unknown>;
  const unknown = Object.keys(req).find((k) => !REQUEST_FIELDS.has(k));
  if (unknown !== undefined) return { field: unknown, message: `unknown field ${JSON.stringify(unknown)}` };
  if (typeof req.request_id !== "string" || !isValidIdempotencyKey(req.request_id)) {
    return { field: "request_id", message: "request_id must be 1-255 characters of A-Z a-z 0-9 _ : . -" };
  }
  if (!Array.isArray(req.jobs) || req.jobs.length === 0 || req.jobs.length > JOBS_PER_REQUEST_MAX) {
    return { field: "jobs", message: `jobs must be an array of 1 to ${JOBS_PER_REQUEST_MAX} jobs` };
  }
  const names = new Set<string>();
  const ids = new Set<string>();
  for (const [i, job] of req.jobs.entries()) {
    const problem = checkJobSpec(job, `jobs[${i}]`);
    if (problem) return problem;
    const spec = job as JobSpec;
    if (names.has(spec.name)) {
      return {
        field: `jobs[${i}].name`,
        message: `jobs[${i}]: the name ${JSON.stringify(spec.name)} is used twice; names are what depends_on refers to`,
        details: { job: spec.name },
      };
    }
    names.add(spec.name);
    if (spec.job_id !== undefined) {
      if (ids.has(spec.job_id)) {
        return {
          field: `jobs[${i}].job_id`,
          message: `jobs[${i}] (${spec.name}): the job_id ${JSON.stringify(spec.job_id)} is used twice`,
          details: { job: spec.name, job_id: spec.job_id },
        };
      }
      ids.add(spec.job_id);
    }
  }
  return checkJobGraph(req.jobs as JobSpec[]);
}

function checkJobSpec(value: unknown, at: string): JobSubmitProblem | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { field: at, message: `${at} must be a JSON object` };
  }
  const job = value as Record<string, unknown>;
  const unknown = Object.keys(job).find((k) => !JOB_FIELDS.has(k));
  if (unknown !== undefined)
    return { field: `${at}.${unknown}`, message: `${at}: unknown field ${JSON.stringify(unknown)}` };
  if (typeof job.name !== "string" || !isValidName(job.name)) {
    return {
      field: `${at}.name`,
      message: `${at}.name must be 1-63 characters of A-Z a-z 0-9 _ . - starting with a letter or digit`,
    };
  }
  const label = `${at} (${job.name})`;
  const prefixed = (p: FieldProblem | null): JobSubmitProblem | null =>
    p && { field: `${at}.${p.field}`, message: `${label}: ${p.message}` };
  if (job.job_id !== undefined && (typeof job.job_id !== "string" || !isValidJobId(job.job_id))) {
    return {
      field: `${at}.job_id`,
      message: `${label}: job_id must be 1-${JOB_ID_MAX_LENGTH} characters of A-Z a-z 0-9 _ : . -`,
    };
  }
  const command = prefixed(checkCommand(job.command));
  if (command) return command;
  if (job.working_dir !== undefined) {
    if (typeof job.working_dir !== "string" || resolveWorkingDir(job.working_dir) === null) {
      return { field: `${at}.working_dir`, message: `${label}: working_dir must be inside ${WORKSPACE}` };
    }
  }
  if (job.env !== undefined) {
    const env = prefixed(checkEnv(job.env));
    if (env) return env;
  }
  if (job.stdin !== undefined && (typeof job.stdin !== "string" || !BASE64.test(job.stdin))) {
    return { field: `${at}.stdin`, message: `${label}: stdin must be base64` };
  }
  if (job.timeout_ms !== undefined && !isIntIn(job.timeout_ms, 1, JOB_TIMEOUT_MAX_MS)) {
    return {
      field: `${at}.timeout_ms`,
      message: `${label}: timeout_ms must be an integer from 1 to ${JOB_TIMEOUT_MAX_MS}`,
    };
  }
  if (job.depends_on !== undefined) {
    const deps = job.depends_on;
    if (!Array.isArray(deps) || !deps.every((d) => typeof d === "string")) {
      return { field: `${at}.depends_on`, message: `${label}: depends_on must be an array of job names` };
    }
    if (new Set(deps).size !== deps.length) {
      return { field: `${at}.depends_on`, message: `${label}: depends_on names a job twice` };
    }
  }
  if (job.dependency_policy !== undefined && !DEPENDENCY_POLICIES.includes(job.dependency_policy as DependencyPolicy)) {
    return {
      field: `${at}.dependency_policy`,
      message: `${label}: dependency_policy must be one of ${DEPENDENCY_POLICIES.join(", ")}`,
    };
  }
  if (job.queue_key !== undefined && (typeof job.queue_key !== "string" || !isValidIdempotencyKey(job.queue_key))) {
    return { field: `${at}.queue_key`, message: `${label}: queue_key must be 1-255 characters of A-Z a-z 0-9 _ : . -` };
  }
  return null;
}

/**
 * The dependency graph of one request: every name in depends_on must be a job of the
 * request, and no job may depend on itself, directly or through others.
 */
export function checkJobGraph(jobs: ReadonlyArray<Pick<JobSpec, "name" | "depends_on">>): JobSubmitProblem | null {
  const byName = new Map(jobs.map((j) => [j.name, j]));
  const unknown: Array<{ job: string; dependency: string }> = [];
  for (const job of jobs) {
    for (const dep of job.depends_on ?? []) if (!byName.has(dep)) unknown.push({ job: job.name, dependency: dep });
  }
  if (unknown.length > 0) {
    const what = unknown.map((u) => `${JSON.stringify(u.job)} depends on ${JSON.stringify(u.dependency)}`).join("; ");
    const index = jobs.findIndex((j) => j.name === unknown[0]!.job);
    return {
      field: `jobs[${index}].depends_on`,
      message: `unknown dependency: ${what}, which ${unknown.length === 1 ? "is not a job" : "are not jobs"} of this request`,
      details: { unknown },
    };
  }
  const cycle = findCycle(jobs);
  if (cycle) {
    return {
      field: "jobs",
      message: `dependency cycle: ${cycle.map((n) => JSON.stringify(n)).join(" → ")}`,
      details: { cycle },
    };
  }
  return null;
}

/** A cycle through depends_on as names (first name repeated at the end), or null. */
export function findCycle(jobs: ReadonlyArray<Pick<JobSpec, "name" | "depends_on">>): string[] | null {
  const deps = new Map(jobs.map((j) => [j.name, j.depends_on ?? []]));
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];
  const visit = (name: string): string[] | null => {
    const s = state.get(name);
    if (s === "done") return null;
    if (s === "visiting") return [...path.slice(path.indexOf(name)), name];
    state.set(name, "visiting");
    path.push(name);
    for (const dep of deps.get(name) ?? []) {
      const found = visit(dep);
      if (found) return found;
    }
    path.pop();
    state.set(name, "done");
    return null;
  };
  for (const job of jobs) {
    const found = visit(job.name);
    if (found) return found;
  }
  return null;
}

/** How a job's `error` begins when its sandbox could not be set up: its command never ran (sbx). */
export const JOB_ERROR_SANDBOX_START_FAILED = "sandbox_start_failed: ";
