// sbx jobs cancel: ask the backend to cancel a job (and, with --dependents, what
// depends on it). Says cancel_requested until the job has really ended.

import { randomUUID } from "node:crypto";
import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { colorStatus } from "./render.js";
import { jobsApi, SANDBOX_FLAG, sandboxOf } from "./target.js";

export interface CancelOptions {
  jobId: string;
  sandbox: string;
  dependents: boolean;
  json: boolean;
}

export async function run(opts: CancelOptions, ctx: Context): Promise<number> {
  const api = await jobsApi(ctx);
  const answer = await api.cancel(opts.sandbox, opts.jobId, opts.dependents, `sbx-cancel-${randomUUID()}`);
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
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("cancel")
    .summary("cancel a job (and what depends on it)")
    .description(
      "Cancel a job. One that has not started is cancelled at once; a running one is\n" +
        "cancel_requested: its process group gets SIGTERM, then SIGKILL after a grace, and it is\n" +
        "cancelled once the group is gone. Jobs depending on it then follow their policy\n" +
        "(all_succeeded: dependency_failed; all_terminal: they run), unless --dependents cancels them too.",
    )
    .argument("<job>", "job id")
    .option(...SANDBOX_FLAG)
    .option("--dependents", "also cancel every job that depends on it, directly or not")
    .option("--json", "print {job_id, status, dependents: [{job_id, name, status}]}")
    .action(
      bind(async (ctx, c) => {
        const raw = c.optsWithGlobals() as { sandbox?: string; dependents?: boolean; json?: boolean };
        const opts = {
          jobId: c.args[0]!,
          sandbox: sandboxOf(ctx, raw.sandbox),
          dependents: raw.dependents === true,
          json: raw.json === true,
        };
        return run(opts, ctx);
      }),
    );
  withExamples(cmd, [
    { command: "sbx jobs cancel job_3f2a…", description: "its dependents then follow their policy" },
    { command: "sbx jobs cancel job_3f2a… --dependents", description: "and everything that depends on it" },
  ]);
}
