// sbx jobs cancel: ask the backend to cancel a job (and, with --dependents, what
// depends on it). Says cancel_requested until the job has really ended.

import { randomUUID } from "../../../platform/random.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { colorStatus } from "./render.js";
import { jobIdFor, jobsApi } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { sandboxIdFor } from "../../id-prefix.js";

export interface CancelOptions {
  jobId: string;
  sandbox: string;
  dependents: boolean;
  json: boolean;
}

export async function run(opts: CancelOptions, ctx: Context): Promise<number> {
  const api = await jobsApi(ctx);
  const jobId = await jobIdFor(api, opts.sandbox, opts.jobId);
  const answer = await api.cancel(opts.sandbox, jobId, opts.dependents, `sbx-cancel-${randomUUID()}`);
  if (opts.json) {
    printJson(ctx, answer);
  } else {
    ctx.io.out(`${answer.job_id}\t${colorStatus(ctx.io.chalk, answer.status)}`);
    for (const d of answer.dependents)
      ctx.io.out(`${d.job_id}\t${colorStatus(ctx.io.chalk, d.status)}\t(depends on it)`);
  }
  if (answer.status === "cancel_requested") {
    ctx.io.info(
      `sbx: its processes are being ended; it is cancelled once they are gone: sbx jobs wait ${answer.job_id}`,
    );
  }
  return ExitCodes.ok;
}

/** Bound to `sbx jobs cancel` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as { sandbox?: string; dependents?: boolean; json?: boolean };
  const opts = {
    jobId: c.args[0]!,
    sandbox: await sandboxIdFor(ctx, raw.sandbox),
    dependents: raw.dependents === true,
    json: raw.json === true,
  };
  return run(opts, ctx);
};
