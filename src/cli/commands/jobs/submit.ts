// sbx jobs submit FILE|-: a file of jobs with dependencies, submitted once as a
// receipt (its request_id is its idempotency identity), optionally followed to the end.

import fs from "node:fs";
import type { JobSubmitRequest, JobSummary } from "../../../protocol/jobs.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import type { ReceiptDocument } from "../../../receipts/document.js";
import { durationOption } from "../../duration.js";
import { UsageError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";
import { exitCodeForJobs, type JobsWaitEnd, type SubmissionDocument } from "./outcome.js";
import { countsText, printJobs } from "./render.js";
import { parseSubmission, recordJobEnds, reportNotAdmitted, type Submitted, submit } from "./submission.js";
import { type JobsWaitBound, jobsWaitBound, sayBoundPassed, sayWaiting, waitForJobs } from "./waiting.js";
import { fileErrorWords } from "../../../common/file-errors.js";
import { sandboxIdFor } from "../../id-prefix.js";

export interface SubmitOptions {
  file: string;
  sandbox: string;
  wait: boolean;
  /** Local deadline of --wait; null: the default bound (JOBS_WAIT_DEFAULT_MS). */
  timeoutMs: number | null;
  json: boolean;
}

export function parseSubmitOptions(
  file: string,
  raw: { wait?: boolean; timeout?: string; json?: boolean },
  sandbox: string,
): SubmitOptions {
  if (raw.timeout !== undefined && raw.wait !== true) throw new UsageError("--timeout goes with --wait");
  return {
    file,
    sandbox,
    wait: raw.wait === true,
    timeoutMs: raw.timeout === undefined ? null : durationOption("--timeout", raw.timeout),
    json: raw.json === true,
  };
}

async function readSubmission(ctx: Context, file: string): Promise<string> {
  if (file === "-") return (await ctx.io.readStdin()).toString("utf8");
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${fileErrorWords(err)}`);
  }
}

export async function run(opts: SubmitOptions, ctx: Context): Promise<number> {
  const { request, fresh } = parseSubmission(
    await readSubmission(ctx, opts.file),
    opts.file === "-" ? "stdin" : opts.file,
  );
  return submitAndFollow(ctx, opts, request, fresh);
}

/** Submits, then (with --wait) waits for every job to end; prints and returns the exit code. */
export async function submitAndFollow(
  ctx: Context,
  opts: Pick<SubmitOptions, "sandbox" | "wait" | "timeoutMs" | "json">,
  request: JobSubmitRequest,
  fresh: boolean,
): Promise<number> {
  const bound = jobsWaitBound(opts.timeoutMs);
  const deadlineAt = Date.now() + bound.timeoutMs;
  const submitted = await submit(ctx, opts.sandbox, request);
  const { doc } = submitted;
  if (fresh) ctx.io.info(`sbx: request id ${request.request_id} (fresh; kept in receipt ${doc.receipt_id})`);
  if (submitted.jobs === null) {
    const exit = reportNotAdmitted(ctx, doc);
    if (opts.json) printJson(ctx, documentOf(submitted, [], exit, { waited: false, end: "done" }));
    return exit;
  }
  let jobs: JobSummary[] = submitted.jobs;
  let end: JobsWaitEnd = "done";
  let settled: ReceiptDocument | null = null;
  if (submitted.alreadyAdmitted) {
    // The same request id and jobs again: the backend answered what it had, nothing ran anew.
    ctx.io.info(
      `sbx: request ${request.request_id} already admitted: ${jobs.length} ${jobs.length === 1 ? "job" : "jobs"}, nothing new (receipt ${doc.receipt_id})`,
    );
  }
  if (opts.wait) {
    sayWaiting(ctx, `${countsText(jobs)} to end`, bound);
    const progress = ctx.io.progress(`waiting for ${countsText(jobs)}…`, { elapsed: true });
    try {
      ({ jobs, end } = await waitForJobs(
        ctx,
        submitted.api,
        opts.sandbox,
        jobs.map((j) => j.job_id),
        deadlineAt,
        (now) => progress.update(`waiting for ${countsText(now)}…`),
      ));
    } finally {
      progress.stop();
    }
    settled = await recordJobEnds(ctx, doc.receipt_id, jobs);
  }
  const exit = opts.wait
    ? exitCodeForJobs(
        jobs.map((j) => j.status),
        end,
      )
    : 0;
  if (opts.json) {
    printJson(
      ctx,
      documentOf(settled ? { ...submitted, doc: settled } : submitted, jobs, exit, { waited: opts.wait, end }),
    );
  } else {
    await printJobs(ctx.io, jobs);
  }
  explainEnd(ctx, request.request_id, doc.receipt_id, {
    waited: opts.wait,
    end,
    already: submitted.alreadyAdmitted,
    bound,
  });
  return exit;
}

function explainEnd(
  ctx: Context,
  requestId: string,
  receiptId: string,
  how: { waited: boolean; end: JobsWaitEnd; already: boolean; bound: JobsWaitBound },
): void {
  const { end } = how;
  if (!how.waited) {
    const follow = `follow it: sbx jobs wait --request ${requestId}`;
    ctx.io.info(
      how.already ? `sbx: ${follow}` : `sbx: request ${requestId} admitted (receipt ${receiptId}); ${follow}`,
    );
  } else if (end === "deadline") {
    sayBoundPassed(ctx, how.bound, `sbx jobs wait --request ${requestId}`);
  } else if (end === "interrupted") {
    ctx.io.err(`sbx: stopped waiting; the jobs keep running. Wait again: sbx jobs wait --request ${requestId}`);
  }
}

function documentOf(
  s: Submitted,
  jobs: JobSummary[],
  exit: number,
  how: { waited: boolean; end: JobsWaitEnd },
): SubmissionDocument {
  return {
    receipt_id: s.doc.receipt_id,
    request_id: s.doc.idempotency_key,
    sandbox_id: s.doc.sandbox_id,
    classification: s.doc.classification,
    error: s.doc.error,
    jobs,
    already_admitted: s.alreadyAdmitted,
    waited: how.waited,
    timed_out: how.end === "deadline",
    exit,
  };
}

/** Bound to `sbx jobs submit` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as { sandbox?: string; wait?: boolean; timeout?: string; json?: boolean };
  return run(parseSubmitOptions(c.args[0]!, raw, await sandboxIdFor(ctx, raw.sandbox)), ctx);
};
