// sbx jobs wait: wait for jobs to end (server-side waits of at most 25 s, repeated);
// a local --timeout stops the waiting and never cancels anything.

import { isValidIdempotencyKey } from "../../../protocol/validate.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { durationOption } from "../../duration.js";
import { UsageError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";
import { exitCodeForJobs } from "./outcome.js";
import { countsText, printJobs } from "./render.js";
import { jobIdFor, jobsApi } from "./target.js";
import { jobsWaitBound, sayBoundPassed, sayWaiting, waitForJobs } from "./waiting.js";
import { sandboxIdFor } from "../../id-prefix.js";

export interface WaitOptions {
  jobIds: string[];
  requestId: string | undefined;
  sandbox: string;
  timeoutMs: number | null;
  json: boolean;
}

export function parseWaitOptions(
  jobIds: string[],
  raw: { request?: string; timeout?: string; json?: boolean },
  sandbox: string,
): WaitOptions {
  if (jobIds.length === 0 && raw.request === undefined) {
    throw new UsageError("name the jobs to wait for", "sbx jobs wait JOB... or sbx jobs wait --request REQUEST_ID");
  }
  if (raw.request !== undefined && !isValidIdempotencyKey(raw.request)) {
    throw new UsageError(`--request ${JSON.stringify(raw.request)} is not a request id`);
  }
  return {
    jobIds,
    requestId: raw.request,
    sandbox,
    timeoutMs: raw.timeout === undefined ? null : durationOption("--timeout", raw.timeout),
    json: raw.json === true,
  };
}

export async function run(opts: WaitOptions, ctx: Context): Promise<number> {
  const bound = jobsWaitBound(opts.timeoutMs);
  const deadlineAt = Date.now() + bound.timeoutMs;
  const api = await jobsApi(ctx);
  let ids: string[] = [];
  for (const ref of opts.jobIds) ids.push(await jobIdFor(api, opts.sandbox, ref));
  if (opts.requestId !== undefined) {
    const { jobs } = await api.list(opts.sandbox, { requestId: opts.requestId });
    if (jobs.length === 0) throw new UsageError(`request ${opts.requestId} has no jobs in sandbox ${opts.sandbox}`);
    ids = [...new Set([...ids, ...jobs.map((j) => j.job_id)])];
  }
  sayWaiting(ctx, `${ids.length === 1 ? "1 job" : `${ids.length} jobs`} to end`, bound);
  const progress = ctx.io.progress(`waiting for ${ids.length} job(s)…`, { elapsed: true });
  let result: Awaited<ReturnType<typeof waitForJobs>>;
  try {
    result = await waitForJobs(ctx, api, opts.sandbox, ids, deadlineAt, (jobs) =>
      progress.update(`waiting for ${countsText(jobs)}…`),
    );
  } finally {
    progress.stop();
  }
  const jobs = result.jobs;
  const exit = exitCodeForJobs(
    jobs.map((j) => j.status),
    result.end,
  );
  if (opts.json) printJson(ctx, { jobs, timed_out: result.end === "deadline", exit });
  else await printJobs(ctx.io, jobs);
  if (result.end === "deadline") {
    sayBoundPassed(
      ctx,
      bound,
      opts.requestId === undefined ? `sbx jobs wait ${ids.join(" ")}` : `sbx jobs wait --request ${opts.requestId}`,
    );
  }
  if (result.end === "interrupted") ctx.io.err("sbx: stopped waiting; nothing was cancelled");
  return exit;
}

/** Bound to `sbx jobs wait` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as { sandbox?: string; request?: string; timeout?: string; json?: boolean };
  return run(parseWaitOptions(c.args, raw, await sandboxIdFor(ctx, raw.sandbox)), ctx);
};
