// Job routes under /sandbox/{id}/jobs: submit (POST), list, get (with output chunks
// after a seq, and bounded server-side waits) and cancel. The jobs themselves are
// jobs/manager.ts's.

import {
  checkJobSubmitRequest,
  isTerminalJobStatus,
  JOB_OUTPUT_PAGE_DEFAULT,
  JOB_OUTPUT_PAGE_MAX,
  JOB_STATUSES,
  JOB_WAIT_MAX_MS,
  type JobList,
  type JobRecord,
  type JobStatus,
  type JobSubmitRequest,
} from "../../../protocol/jobs.js";
import { ErrorCodes } from "../../../protocol/types.js";
import { isValidIdempotencyKey, KNOWN_FIELDS, unknownFields } from "../../../protocol/validate.js";
import type { RequestContext } from "../context.js";
import { ApiError, intParam, invalidRequest, jsonReply, parseJsonBody, type Reply } from "../replies.js";
import { REPLAYED_HEADER, runFixedAnswerMutation, runMutation } from "../idempotency.js";
import type { JobRow } from "../../jobs/index.js";

/**
 * POST …/jobs {request_id, jobs} → 201 {request_id, sandbox_id, jobs: [{job_id, name,
 * status}]}. The request id makes admission idempotent (the same submission again
 * answers the same jobs, with Idempotent-Replayed: true); an Idempotency-Key is
 * honoured too, like on every mutation. 409 job_id_conflict / request_id_conflict
 * when an id already names something else; 400 names the job and the problem.
 */
export function submitJobs(ctx: RequestContext): Promise<Reply> {
  const { sandboxes, jobs } = ctx.services;
  const sandbox = sandboxes.resolve(ctx.params.id!, { createDefault: true });
  return runMutation(ctx, {
    replay: async (stored) => {
      const requestId = (JSON.parse(stored.response ?? "{}") as { request_id?: unknown }).request_id;
      const answer = typeof requestId === "string" ? jobs.answerFor(sandbox.sandbox_id, requestId) : null;
      if (answer === null) {
        throw new ApiError(404, ErrorCodes.jobNotFound, "the jobs this Idempotency-Key submitted are gone", {
          idempotency_key: ctx.idempotencyKey,
        });
      }
      return jsonReply(stored.status, answer);
    },
    admit: async (claim) => {
      const body = parseJsonBody(ctx.body);
      const problem = checkJobSubmitRequest(body);
      if (problem) {
        throw new ApiError(400, ErrorCodes.invalidRequest, problem.message, {
          field: problem.field,
          ...problem.details,
        });
      }
      const req = body as JobSubmitRequest;
      const { answer, replayed } = jobs.submit(sandbox, req, () =>
        claim?.recordResponse(201, { request_id: req.request_id }),
      );
      return jsonReply(201, answer, replayed ? { [REPLAYED_HEADER]: "true" } : undefined);
    },
  });
}

/**
 * GET …/jobs?request_id=R&status=S&id_prefix=P&wait_ms=W → {jobs} in acceptance order, without
 * output. `wait_ms` (≤ 25 s) waits until none of the listed jobs is unfinished;
 * `wait_timeout: true` when the wait ran out first.
 */
export async function listJobs(ctx: RequestContext): Promise<Reply> {
  const sandbox = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: true });
  const requestId = ctx.query.get("request_id");
  if (requestId !== null && !isValidIdempotencyKey(requestId)) throw invalidRequest("request_id", "invalid request_id");
  const status = ctx.query.get("status");
  if (status !== null && !JOB_STATUSES.includes(status as JobStatus)) {
    throw invalidRequest("status", `status must be one of ${JOB_STATUSES.join(", ")}`);
  }
  const idPrefix = ctx.query.get("id_prefix");
  if (idPrefix !== null && !isValidIdempotencyKey(idPrefix)) throw invalidRequest("id_prefix", "invalid id_prefix");
  const waitMs = intParam(ctx.query, "wait_ms", 0, JOB_WAIT_MAX_MS) ?? 0;
  const filter = {
    ...(requestId !== null && { requestId }),
    ...(status !== null && { status: status as JobStatus }),
    ...(idPrefix !== null && { idPrefix }),
  };
  const jobs = ctx.services.jobs;
  // A wait is real elapsed time, as the timers wait it (record times are the backend's clock).
  const deadline = performance.now() + waitMs;
  for (;;) {
    const listed = jobs.list(sandbox.sandbox_id, filter);
    const unfinished = listed.filter((j) => !isTerminalJobStatus(j.status)).map((j) => j.job_id);
    const left = deadline - performance.now();
    if (waitMs === 0 || unfinished.length === 0 || ctx.signal.aborted) return jsonReply(200, { jobs: listed });
    // A backend on its way down answers what it has now.
    if (left <= 0 || !jobs.accepting) return jsonReply(200, { jobs: listed, wait_timeout: true } satisfies JobList);
    await jobs.waitForChange(unfinished, left, ctx.signal);
  }
}

/**
 * GET …/jobs/{job_id}?after_seq=N&output_limit=B&wait_ms=W → the job with its kept
 * output chunks after seq N (up to B raw bytes, default 1 MiB, at most 4 MiB; 0: no
 * output). `wait_ms` (≤ 25 s) waits until the job ended or, when `after_seq` is given
 * and B > 0, until output after it exists; `wait_timeout: true` when it ran out first.
 * A seq past the job's last chunk: 422 invalid_cursor.
 */
export async function getJob(ctx: RequestContext): Promise<Reply> {
  let row = findJob(ctx);
  const afterSeq = intParam(ctx.query, "after_seq", 0, Number.MAX_SAFE_INTEGER) ?? 0;
  const limit = intParam(ctx.query, "output_limit", 0, JOB_OUTPUT_PAGE_MAX) ?? JOB_OUTPUT_PAGE_DEFAULT;
  const waitMs = intParam(ctx.query, "wait_ms", 0, JOB_WAIT_MAX_MS) ?? 0;
  const following = ctx.query.has("after_seq") && limit > 0;
  if (afterSeq > row.output_last_seq) {
    throw new ApiError(
      422,
      ErrorCodes.invalidCursor,
      `after_seq ${afterSeq} is past the last output chunk of ${row.job_id} (${row.output_last_seq})`,
      { after_seq: afterSeq, output_last_seq: row.output_last_seq },
    );
  }
  const jobs = ctx.services.jobs;
  const deadline = performance.now() + waitMs;
  let waitTimeout = false;
  while (waitMs > 0 && !isTerminalJobStatus(row.status) && !(following && row.output_last_seq > afterSeq)) {
    const left = deadline - performance.now();
    if (left <= 0 || ctx.signal.aborted || !jobs.accepting) {
      waitTimeout = !ctx.signal.aborted;
      break;
    }
    await jobs.waitForChange([row.job_id], left, ctx.signal);
    row = jobs.get(row.job_id) ?? row;
  }
  const record: JobRecord = jobs.record(row, afterSeq, limit);
  return jsonReply(200, waitTimeout ? { ...record, wait_timeout: true } : record);
}

/**
 * POST …/jobs/{job_id}/cancel {dependents?} → 202 {job_id, status, dependents}. A
 * running job answers `cancel_requested` (it ends `cancelled` once its group is
 * gone); one that had not started is `cancelled` at once; an ended job is left as
 * it is and answered with its status.
 */
export function cancelJob(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const body = parseJsonBody(ctx.body, {});
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw invalidRequest("body", "body must be a JSON object {dependents?: bool}");
    }
    const unknown = unknownFields(body, KNOWN_FIELDS.JobCancelRequest);
    if (unknown) throw invalidRequest(unknown.field, unknown.message);
    const { dependents } = body as { dependents?: unknown };
    if (dependents !== undefined && typeof dependents !== "boolean") {
      throw invalidRequest("dependents", "dependents must be a boolean");
    }
    const row = findJob(ctx);
    return jsonReply(202, ctx.services.jobs.cancel(row, dependents === true));
  });
}

/** The job named by the path, in the path's sandbox. Throws 404 job_not_found. */
function findJob(ctx: RequestContext): JobRow {
  const sandbox = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: true });
  const jobId = ctx.params.jid!;
  const row = ctx.services.jobs.get(jobId);
  if (row === null || row.sandbox_id !== sandbox.sandbox_id) {
    throw new ApiError(404, ErrorCodes.jobNotFound, `no job ${jobId} in sandbox ${sandbox.name}`, { job_id: jobId });
  }
  return row;
}
