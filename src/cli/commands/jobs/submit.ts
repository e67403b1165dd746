// sbx jobs submit FILE|-: a file of jobs with dependencies, submitted once as a
// receipt (its request_id is its idempotency identity), optionally followed to the end.

import fs from "node:fs";
import type { Command } from "commander";
import type { JobSubmitRequest, JobSummary } from "../../../protocol/jobs.js";
import { type Bind, declareCompletion, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { durationOption } from "../../duration.js";
import { UsageError } from "../../errors.js";
import { printJson } from "../../render/outcome.js";
import { exitCodeForJobs, type JobsWaitEnd, type SubmissionDocument } from "./outcome.js";
import { countsText, printJobs } from "./render.js";
import { parseSubmission, reportNotAdmitted, type Submitted, submit } from "./submission.js";
import { SANDBOX_FLAG, sandboxOf } from "./target.js";
import { waitForJobs } from "./waiting.js";

export interface SubmitOptions {
  file: string;
  sandbox: string;
  wait: boolean;
  /** Local deadline of --wait; null: wait until every job ended. */
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
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
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
  const deadlineAt = opts.timeoutMs === null ? null : Date.now() + opts.timeoutMs;
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
  if (opts.wait) {
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
  }
  const exit = opts.wait
    ? exitCodeForJobs(
        jobs.map((j) => j.status),
        end,
      )
    : 0;
  if (opts.json) {
    printJson(ctx, documentOf(submitted, jobs, exit, { waited: opts.wait, end }));
  } else {
    printJobs(ctx.io, jobs);
  }
  explainEnd(ctx, request.request_id, doc.receipt_id, opts.wait, end);
  return exit;
}

function explainEnd(ctx: Context, requestId: string, receiptId: string, waited: boolean, end: JobsWaitEnd): void {
  if (!waited) {
    ctx.io.info(
      `sbx: request ${requestId} admitted (receipt ${receiptId}); follow it: sbx jobs wait --request ${requestId}`,
    );
  } else if (end === "deadline") {
    ctx.io.err(
      `sbx: stopped waiting at --timeout; the jobs keep running. Wait again: sbx jobs wait --request ${requestId}`,
    );
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
    waited: how.waited,
    timed_out: how.end === "deadline",
    exit,
  };
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("submit")
    .summary("submit a file of jobs with dependencies")
    .description(
      "Submit FILE (or - for stdin): the API's request body, {request_id, jobs: [{job_id?, name, command,\n" +
        "working_dir?, env?, stdin?, timeout_ms?, depends_on?, dependency_policy?, queue_key?}]}. A\n" +
        "missing request_id gets a fresh one (printed). The submission is a receipt: its request_id is\n" +
        "its idempotency identity, committed before it is sent, and it is sent once; the same request\n" +
        "again admits nothing new. Prints the admitted jobs; with --wait, waits for all of them (server-\n" +
        "side waits, repeated) and exits 0 when all succeeded, 1 when any failed, was cancelled, timed\n" +
        "out or had a dependency fail, 255 when any is interrupted or lost, 124 when --timeout passed\n" +
        "first (the jobs keep running), 125 when the submission was refused (nothing admitted).",
    )
    .argument("<file>", "a JSON file of jobs, or - for stdin")
    .option(...SANDBOX_FLAG)
    .option("--wait", "wait until every job has ended; exit with what they did")
    .option("--timeout <dur>", "with --wait: stop waiting after this long (the jobs are not cancelled)")
    .option(
      "--json",
      "print {receipt_id, request_id, sandbox_id, classification, error, jobs, waited, timed_out, exit}",
    )
    .action(
      bind(async (ctx, c) => {
        const raw = c.optsWithGlobals() as { sandbox?: string; wait?: boolean; timeout?: string; json?: boolean };
        return run(parseSubmitOptions(c.args[0]!, raw, sandboxOf(ctx, raw.sandbox)), ctx);
      }),
    );
  declareCompletion(cmd, "<file>", "file");
  withExamples(cmd, [
    { command: "sbx jobs submit pipeline.json --wait", description: "submit and follow every job to its end" },
    { command: "sbx jobs submit pipeline.json", description: "submit and return; the job ids are printed" },
    {
      command: 'jq -n \'{jobs: [{name: "hi", command: "echo hi"}]}\' | sbx jobs submit - --json',
      description: "from stdin, for scripts",
    },
    { command: "sbx jobs submit ci.json --wait --timeout 20m", description: "stop waiting after 20m (exit 124)" },
  ]);
}
