// sbx jobs show: one job as the API returns it, with all of its kept output chunks.

import type { JobOutputChunk, JobRecord } from "../../../protocol/jobs.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { formatCommand } from "../../render/receipt.js";
import { colorStatus, exitText } from "./render.js";
import { jobIdFor, jobsApi } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { sandboxIdFor } from "../../id-prefix.js";

export async function run(opts: { jobId: string; sandbox: string; json: boolean }, ctx: Context): Promise<number> {
  const api = await jobsApi(ctx);
  const jobId = await jobIdFor(api, opts.sandbox, opts.jobId);
  if (opts.json) {
    // Every page of kept output, in one document.
    const output: JobOutputChunk[] = [];
    let job: JobRecord;
    for (let after = 0; ; after = job.output_next_seq) {
      job = await api.get(opts.sandbox, jobId, { afterSeq: after });
      output.push(...job.output);
      if (job.output.length === 0) break;
    }
    printJson(ctx, { ...job, output });
    return ExitCodes.ok;
  }
  const j = await api.get(opts.sandbox, jobId, { outputLimit: 0 });
  const rows: Array<[string, string]> = [
    ["job", j.job_id],
    ["name", j.name],
    ["request", j.request_id],
    ["status", colorStatus(ctx.io.chalk, j.status)],
    ["exit", exitText(j)],
    ["error", j.error ?? "-"],
    ["command", formatCommand(j.command)],
    ["working_dir", j.working_dir],
    ["depends_on", j.depends_on.length === 0 ? "-" : `${j.depends_on.join(", ")} (${j.dependency_policy})`],
    ["queue_key", j.queue_key ?? "-"],
    ["timeout", `${j.timeout_ms} ms`],
    ["left_behind", j.leftover_processes.length === 0 ? "-" : `${j.leftover_processes.join(", ")} (killed)`],
    ["created_at", j.created_at],
    ["started_at", j.started_at ?? "-"],
    ["finished_at", j.finished_at ?? "-"],
    [
      "output",
      `${j.output_bytes} bytes${j.output_omitted_bytes > 0 ? ` (${j.output_omitted_bytes} omitted from the middle)` : ""}; sbx jobs logs ${j.job_id}`,
    ],
  ];
  for (const [k, v] of rows) ctx.io.out(`${k}\t${v}`);
  return ExitCodes.ok;
}

/** Bound to `sbx jobs show` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as { sandbox?: string; json?: boolean };
  return run({ jobId: c.args[0]!, sandbox: await sandboxIdFor(ctx, raw.sandbox), json: raw.json === true }, ctx);
};
