import type { JobStatus, JobSummary } from "../../../protocol/jobs.js";
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
  /** null: every sandbox's (-A). */
  sandbox: string | null;
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
  const api = await jobsApi(ctx);
  const filter = {
    ...(opts.requestId !== undefined && { requestId: opts.requestId }),
    ...(opts.status !== undefined && { status: opts.status }),
  };
  let jobs: Array<JobSummary & { sandbox?: string }>;
  if (opts.sandbox === null) {
    // -A: every sandbox's, each sandbox in the order the backend lists them.
    const sandboxes = await (await ctx.api()).listSandboxes();
    const each = await Promise.all(
      sandboxes.map(async (s) => (await api.list(s.sandbox_id, filter)).jobs.map((j) => ({ ...j, sandbox: s.name }))),
    );
    jobs = each.flat();
  } else {
    jobs = (await api.list(opts.sandbox, filter)).jobs;
  }
  if (opts.json) printJson(ctx, { jobs });
  else await printJobs(ctx.io, jobs, { request: opts.requestId === undefined, sandbox: opts.sandbox === null });
  return ExitCodes.ok;
}

/** Bound to `sbx jobs list` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as {
    sandbox?: string;
    allSandboxes?: boolean;
    request?: string;
    status?: string;
    json?: boolean;
  };
  if (raw.allSandboxes === true && raw.sandbox !== undefined) {
    throw new UsageError("-A (--all-sandboxes) and -s (--sandbox) cannot go together");
  }
  const sandbox = raw.allSandboxes === true ? null : await sandboxIdFor(ctx, raw.sandbox);
  return run({ ...parseListOptions(raw, ""), sandbox }, ctx);
};
