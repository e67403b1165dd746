import type { JobStatus } from "../../../protocol/jobs.js";
import { isValidIdempotencyKey } from "../../../protocol/validate.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { UsageError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";
import { printJobs } from "./render.js";
import { jobsApi } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { sandboxIdFor } from "../../id-prefix.js";

export interface ListOptions {
  sandbox: string;
  requestId: string | undefined;
  status: JobStatus | undefined;
  json: boolean;
}

export function parseListOptions(
  raw: { request?: string; status?: string; json?: boolean },
  sandbox: string,
): ListOptions {
  if (raw.request !== undefined && !isValidIdempotencyKey(raw.request)) {
    throw new UsageError(`--request ${JSON.stringify(raw.request)} is not a request id`);
  }
  return { sandbox, requestId: raw.request, status: raw.status as JobStatus | undefined, json: raw.json === true };
}

export async function run(opts: ListOptions, ctx: Context): Promise<number> {
  const { jobs } = await (await jobsApi(ctx)).list(opts.sandbox, {
    ...(opts.requestId !== undefined && { requestId: opts.requestId }),
    ...(opts.status !== undefined && { status: opts.status }),
  });
  if (opts.json) printJson(ctx, { jobs });
  else await printJobs(ctx.io, jobs, { request: opts.requestId === undefined });
  return ExitCodes.ok;
}

/** Bound to `sbx jobs list` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as { sandbox?: string; request?: string; status?: string; json?: boolean };
  return run(parseListOptions(raw, await sandboxIdFor(ctx, raw.sandbox)), ctx);
};
