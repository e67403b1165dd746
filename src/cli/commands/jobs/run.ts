// sbx jobs run -- CMD…: one job, submitted as a receipt, its output followed as it
// comes, exiting like exec does.

import {
  JOB_TIMEOUT_DEFAULT_MS,
  JOB_TIMEOUT_MAX_MS,
  type JobSpec,
  type JobSubmitRequest,
} from "../../../protocol/jobs.js";
import { TIMEOUT_MIN_MS } from "../../../protocol/types.js";
import { isValidIdempotencyKey, isValidName } from "../../../protocol/validate.js";
import type { RunFn } from "../../command.js";
import { commandFromFlags, envFromFlags, workingDirFromFlag } from "../../command-flags.js";
import type { Context } from "../../context.js";
import { durationOption, longerWorkHint } from "../../duration.js";
import { UsageError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";
import { exitCodeForJob, type SubmissionDocument } from "./outcome.js";
import { exitText, noteOf } from "./render.js";
import { freshRequestId, recordJobEnds, reportNotAdmitted, submit } from "./submission.js";
import { readJobOutput, summaryOf } from "./waiting.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { sandboxIdFor } from "../../id-prefix.js";

export interface RunOptions {
  sandbox: string;
  request: JobSubmitRequest;
  json: boolean;
}

interface RawRunFlags {
  sandbox?: string;
  name?: string;
  timeout?: string;
  shell?: string;
  cwd?: string;
  env?: string[];
  envFile?: string;
  queueKey?: string;
  json?: boolean;
}

export function parseRunOptions(argv: string[], raw: RawRunFlags, sandbox: string): RunOptions {
  const command = commandFromFlags(argv, raw.shell, "usage: sbx jobs run [options] -- COMMAND [ARGS...]");
  const name = raw.name ?? "run";
  if (!isValidName(name)) throw new UsageError(`--name ${JSON.stringify(name)}: letters, digits, _ . - (at most 63)`);
  if (raw.queueKey !== undefined && !isValidIdempotencyKey(raw.queueKey)) {
    throw new UsageError("--queue-key must be 1-255 characters of A-Z a-z 0-9 _ : . -");
  }
  const workingDir = workingDirFromFlag(raw.cwd);
  const env = envFromFlags(raw.env, raw.envFile);
  const job: JobSpec = {
    name,
    command,
    ...(workingDir === undefined ? {} : { working_dir: workingDir }),
    ...(Object.keys(env).length ? { env } : {}),
    timeout_ms:
      raw.timeout === undefined
        ? JOB_TIMEOUT_DEFAULT_MS
        : durationOption("--timeout", raw.timeout, {
            // The floor is exec's (1s): a job's timeout below it only races its start.
            min: TIMEOUT_MIN_MS,
            max: JOB_TIMEOUT_MAX_MS,
            overMax: (ms) => longerWorkHint(raw.timeout!, ms),
          }),
    ...(raw.queueKey === undefined ? {} : { queue_key: raw.queueKey }),
  };
  return { sandbox, request: { request_id: freshRequestId(), jobs: [job] }, json: raw.json === true };
}

export async function run(opts: RunOptions, ctx: Context): Promise<number> {
  const submitted = await submit(ctx, opts.sandbox, opts.request, "jobs_run");
  const { doc } = submitted;
  const document = (over: Partial<RunDocument>): RunDocument => ({
    receipt_id: doc.receipt_id,
    request_id: doc.idempotency_key,
    sandbox_id: doc.sandbox_id,
    classification: doc.classification,
    error: doc.error,
    jobs: [],
    already_admitted: submitted.alreadyAdmitted,
    waited: true,
    timed_out: false,
    exit: doc.exit ?? ExitCodes.inDoubt,
    stdout: "",
    stderr: "",
    ...over,
  });
  if (submitted.jobs === null || submitted.jobs.length !== 1) {
    const exit = reportNotAdmitted(ctx, doc);
    if (opts.json) printJson(ctx, document({ waited: false, exit }));
    return exit;
  }
  const jobId = submitted.jobs[0]!.job_id;
  ctx.io.verbose(`sbx: job ${jobId} (request ${doc.idempotency_key}, receipt ${doc.receipt_id})`);
  const kept = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  const job = await readJobOutput(ctx, submitted.api, opts.sandbox, jobId, true, {
    chunk: (c, data) => {
      if (opts.json) kept[c.stream].push(data);
      else if (c.stream === "stdout") ctx.io.writeOut(data);
      else ctx.io.writeErr(data);
    },
    omitted: (bytes) => {
      if (!opts.json) ctx.io.err(`sbx: ${bytes} bytes of output were not kept here (the job's output budget)`);
    },
  });
  if (job === null) {
    ctx.io.err(`sbx: stopped following; job ${jobId} keeps running. Cancel it: sbx jobs cancel ${jobId}`);
    return ExitCodes.cancelled;
  }
  const exit = exitCodeForJob(job);
  // The receipt settles to the job's outcome, as an exec's does.
  const settled = await recordJobEnds(ctx, doc.receipt_id, [summaryOf(job)]);
  if (opts.json) {
    printJson(
      ctx,
      document({
        ...(settled && { classification: settled.classification, error: settled.error }),
        jobs: [summaryOf(job)],
        exit,
        stdout: Buffer.concat(kept.stdout).toString("utf8"),
        stderr: Buffer.concat(kept.stderr).toString("utf8"),
      }),
    );
  }
  if (job.status !== "succeeded" && job.status !== "failed") {
    ctx.io.err(`sbx: job ${jobId} ended ${job.status} (exit ${exitText(job)}): ${noteOf(job)}`);
  } else if (job.leftover_processes.length > 0) {
    ctx.io.info(`sbx: ${noteOf(job)}`);
  }
  return exit;
}

/** `run --json`: the submission document with the job's kept output. */
export interface RunDocument extends SubmissionDocument {
  stdout: string;
  stderr: string;
}

/** Bound to `sbx jobs run` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as RawRunFlags;
  return run(parseRunOptions(c.args, raw, await sandboxIdFor(ctx, raw.sandbox)), ctx);
};
