import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { jobIdFor, jobsApi } from "./target.js";
import { readJobOutput } from "./waiting.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { sandboxIdFor } from "../../id-prefix.js";

export interface LogsOptions {
  jobId: string;
  sandbox: string;
  follow: boolean;
  json: boolean;
}

export async function run(opts: LogsOptions, ctx: Context): Promise<number> {
  const api = await jobsApi(ctx);
  const jobId = await jobIdFor(api, opts.sandbox, opts.jobId);
  const job = await readJobOutput(ctx, api, opts.sandbox, jobId, opts.follow, {
    chunk: (c, data) => {
      if (opts.json) ctx.io.out(JSON.stringify({ seq: c.seq, stream: c.stream, offset: c.offset, data: c.data }));
      else if (c.stream === "stdout") ctx.io.writeOut(data);
      else ctx.io.writeErr(data);
    },
    omitted: (bytes) => ctx.io.err(`sbx: ${bytes} bytes of output were not kept here (the job's output budget)`),
  });
  if (job === null) return ExitCodes.cancelled;
  if (opts.follow && !opts.json) ctx.io.info(`sbx: ${job.job_id} ${job.status}`);
  return ExitCodes.ok;
}

/** Bound to `sbx jobs logs` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as { sandbox?: string; follow?: boolean; json?: boolean };
  const opts = {
    jobId: c.args[0]!,
    sandbox: await sandboxIdFor(ctx, raw.sandbox),
    follow: raw.follow === true,
    json: raw.json === true,
  };
  return run(opts, ctx);
};
