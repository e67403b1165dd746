// Sending a submission of jobs as a receipt: its request_id is its idempotency
// identity, committed in the receipt before the request is sent once. What the
// backend admitted is then read by request id; a submission refused or in doubt is
// said on stderr with the next step (`sbx recover` reads it by request id, never
// submitting again).

import { randomUUID } from "../../../platform/random.js";
import type { JobsApi } from "../../../client/jobs.js";
import { checkJobSubmitRequest, type JobSubmitRequest, type JobSummary } from "../../../protocol/jobs.js";
import type { JobsKind } from "../../../receipts/classify-jobs.js";
import { explain, type ReceiptDocument, receiptDocument } from "../../../receipts/document.js";
import { recordJobs } from "../../observe.js";
import type { Context } from "../../context.js";
import { dispatchNew } from "../../dispatch.js";
import { SbxError, UsageError } from "../../../common/errors.js";
import { jobsApi } from "./target.js";
import { Interrupted, read } from "./waiting.js";
import { ExitCodes } from "../../../common/exit-codes.js";

/** A fresh request id, for a submission that names none. */
export const freshRequestId = () => `sbx-req-${randomUUID()}`;

/**
 * A submission file's text as a request: a missing request_id gets a fresh one;
 * anything the backend would refuse is refused here first (exit 125, nothing sent).
 */
export function parseSubmission(text: string, source: string): { request: JobSubmitRequest; fresh: boolean } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `${source} is not JSON: ${(err as Error).message}`,
      "see `sbx jobs submit --help` for the format",
    );
  }
  const fresh = typeof doc === "object" && doc !== null && !Array.isArray(doc) && !("request_id" in doc);
  const request = fresh ? { request_id: freshRequestId(), ...(doc as object) } : doc;
  const problem = checkJobSubmitRequest(request);
  if (problem) throw new UsageError(`${source}: ${problem.message}`, "nothing was sent");
  return { request: request as JobSubmitRequest, fresh };
}

export interface Submitted {
  doc: ReceiptDocument;
  api: JobsApi;
  /** The admitted jobs (as the backend lists them now), or null when nothing is known to be admitted. */
  jobs: JobSummary[] | null;
  /** The backend had admitted this request already (the same request id and jobs): nothing new was admitted. */
  alreadyAdmitted: boolean;
}

/**
 * Commits the receipt, sends the submission once, and reads what was admitted. `kind`
 * jobs_run: `sbx jobs run`'s one job, whose receipt settles to its outcome (classify-jobs.ts).
 */
export async function submit(
  ctx: Context,
  sandbox: string,
  request: JobSubmitRequest,
  kind: JobsKind = "jobs_submit",
): Promise<Submitted> {
  const endpoint = ctx.endpoint();
  const api = await ctx.api(endpoint);
  const body = Buffer.from(JSON.stringify(request));
  const outcome = await dispatchNew(
    ctx,
    endpoint,
    api,
    { kind, sandbox, body, key: request.request_id, clientTimeoutMs: 30_000 },
    {
      beforeSend: (receiptId, path) => {
        ctx.io.verbose(`sbx: receipt ${receiptId} committed; request id ${request.request_id}`);
        ctx.io.verbose(`sbx: POST ${path} (${body.length} bytes) to ${endpoint.apiUrl}, profile ${endpoint.profile}`);
      },
    },
  );
  const jobs = await jobsApi(ctx);
  const doc = outcome.document;
  const alreadyAdmitted = outcome.replayed;
  // Admitted: the answer listed the request's jobs (whatever they did since).
  if (doc.request_id === null) return { doc, api: jobs, jobs: null, alreadyAdmitted };
  try {
    const admitted = await read(ctx, () => jobs.list(sandbox, { requestId: request.request_id }));
    return { doc, api: jobs, jobs: admitted.jobs, alreadyAdmitted };
  } catch (err) {
    if (!(err instanceof Interrupted)) throw err;
    throw new SbxError("interrupted", `request ${request.request_id} was admitted; reading its jobs was interrupted`, {
      exitCode: ExitCodes.cancelled,
      hint: `sbx jobs list --request ${request.request_id}`,
    });
  }
}

/** Says why nothing is known to be admitted, and what to do; returns the exit code. */
export function reportNotAdmitted(ctx: Context, doc: ReceiptDocument): number {
  const exit = doc.exit ?? ExitCodes.inDoubt;
  if (exit === ExitCodes.inDoubt) {
    ctx.io.err(
      ctx.io.errChalk.yellow(
        `sbx: the jobs of request ${doc.idempotency_key} may have been admitted (receipt ${doc.receipt_id}); ` +
          "`sbx recover` reads them by request id and never submits again. If it finds none, sending it " +
          `again is safe (the same request id never admits twice): sbx receipts resubmit ${doc.receipt_id}`,
      ),
    );
  } else {
    ctx.io.err(explain(doc));
  }
  return exit;
}

/**
 * Records on the submission's receipt what is now known of its jobs (each job's end;
 * for `jobs run`, its outcome becomes the receipt's). Never fails the command: the
 * jobs did what they did; a store that cannot take it is said, and the receipt keeps
 * what it knew (`sbx recover` reads the jobs again).
 */
export async function recordJobEnds(
  ctx: Context,
  receiptId: string,
  jobs: readonly JobSummary[],
): Promise<ReceiptDocument | null> {
  try {
    const stored = (await ctx.receipts()).get(receiptId);
    await recordJobs(ctx, stored, "wait", jobs, 200);
    return receiptDocument((await ctx.receipts()).get(receiptId));
  } catch (err) {
    ctx.io.err(`sbx: the jobs' ends could not be recorded on receipt ${receiptId}: ${(err as Error).message}`);
    return null;
  }
}
