// Idempotent admission of a submission (docs/protocol.md, "Jobs"): each job's inputs
// are normalized and digested, omitted job ids are derived from the sandbox, the
// request id and the job's index, and what is already stored decides: the same
// request with the same jobs is admitted once (nothing runs again); a job id that
// names a job with other inputs, or a request id that names other jobs, is refused.

import { createHash } from "node:crypto";
import {
  type DependencyPolicy,
  JOB_TIMEOUT_DEFAULT_MS,
  type JobSpec,
  type JobSubmitRequest,
} from "../../protocol/jobs.js";
import { ErrorCodes } from "../../protocol/types.js";
import { resolveWorkingDir } from "../../protocol/validate.js";
import { Refusal } from "../refusal.js";

export interface NormalizedJob {
  jobId: string;
  index: number;
  name: string;
  digest: string;
  command: string[] | string;
  workingDir: string;
  env: Record<string, string>;
  /** base64, or null for /dev/null */
  stdin: string | null;
  timeoutMs: number;
  dependsOn: string[];
  dependencyIds: string[];
  policy: DependencyPolicy;
  queueKey: string | null;
}

export interface NormalizedSubmission {
  requestId: string;
  jobs: NormalizedJob[];
  /** Of every job's id and digest, in order: the same digest is the same submission. */
  digest: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The id of a job submitted without one: the same sandbox, request id and index give the same id. */
export function deriveJobId(sandboxId: string, requestId: string, index: number): string {
  return `job_${sha256(`${sandboxId}\0${requestId}\0${index}`).slice(0, 24)}`;
}

/** A validated submission (checkJobSubmitRequest) with every default filled in and every job digested. */
export function normalizeSubmission(sandboxId: string, req: JobSubmitRequest): NormalizedSubmission {
  const ids = new Map(req.jobs.map((j, i) => [j.name, j.job_id ?? deriveJobId(sandboxId, req.request_id, i)]));
  const jobs = req.jobs.map((spec: JobSpec, index): NormalizedJob => {
    const env = Object.fromEntries(Object.entries(spec.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const job = {
      name: spec.name,
      command: spec.command,
      workingDir: resolveWorkingDir(spec.working_dir)!,
      env,
      stdin: spec.stdin ?? null,
      timeoutMs: spec.timeout_ms ?? JOB_TIMEOUT_DEFAULT_MS,
      dependsOn: spec.depends_on ?? [],
      policy: spec.dependency_policy ?? "all_succeeded",
      queueKey: spec.queue_key ?? null,
    };
    const digest = sha256(
      JSON.stringify([
        sandboxId,
        req.request_id,
        job.name,
        job.command,
        job.workingDir,
        job.env,
        job.stdin,
        job.timeoutMs,
        [...job.dependsOn].sort(),
        job.policy,
        job.queueKey,
      ]),
    );
    return {
      ...job,
      jobId: ids.get(spec.name)!,
      index,
      digest,
      dependencyIds: job.dependsOn.map((name) => ids.get(name)!),
    };
  });
  return { requestId: req.request_id, jobs, digest: sha256(JSON.stringify(jobs.map((j) => [j.jobId, j.digest]))) };
}

/** A submission refused because an id already names something else; nothing was admitted. */
export class JobConflictError extends Refusal {
  constructor(
    code: typeof ErrorCodes.jobIdConflict | typeof ErrorCodes.requestIdConflict,
    message: string,
    details: Record<string, unknown>,
  ) {
    super(code, message, details);
    this.name = "JobConflictError";
  }
}

export interface StoredJob {
  digest: string;
  request_id: string;
  sandbox_id: string;
  name: string;
}

/**
 * `new`: nothing of it is stored yet; `same`: the very submission was admitted before.
 * Throws JobConflictError when a job id or the request id names something else.
 */
export function judgeSubmission(
  sub: NormalizedSubmission,
  stored: { request: { digest: string } | undefined; job: (jobId: string) => StoredJob | undefined },
): "new" | "same" {
  for (const job of sub.jobs) {
    const found = stored.job(job.jobId);
    if (found && found.digest !== job.digest) {
      throw new JobConflictError(
        ErrorCodes.jobIdConflict,
        `jobs[${job.index}] (${job.name}): job_id ${job.jobId} already names a job with other inputs ` +
          `(job ${JSON.stringify(found.name)} of request ${found.request_id}); nothing was admitted`,
        { job_id: job.jobId, name: job.name, index: job.index, existing_request_id: found.request_id },
      );
    }
  }
  if (stored.request === undefined) return "new";
  if (stored.request.digest === sub.digest) return "same";
  throw new JobConflictError(
    ErrorCodes.requestIdConflict,
    `request ${sub.requestId} was already submitted with other jobs; nothing was admitted ` +
      "(a request id names one submission: use a new one for other jobs)",
    { request_id: sub.requestId },
  );
}
