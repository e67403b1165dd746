// sbx jobs list: a sandbox's jobs in acceptance order, by request and status.

import { type Command, Option } from "commander";
import { JOB_STATUSES, type JobStatus } from "../../../protocol/jobs.js";
import { isValidIdempotencyKey } from "../../../protocol/validate.js";
import { type Bind, declareChoices, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { UsageError } from "../../errors.js";
import { printJson } from "../../render/outcome.js";
import { printJobs } from "./render.js";
import { jobsApi, SANDBOX_FLAG, sandboxOf } from "./target.js";

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
  else printJobs(ctx.io, jobs, { request: opts.requestId === undefined });
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("list")
    .summary("list jobs (by request, by status)")
    .description("List a sandbox's jobs in the order they were accepted, without their output.")
    .option(...SANDBOX_FLAG)
    .option("--request <id>", "only the jobs of this request id")
    .addOption(new Option("--status <status>", "only jobs with this status").choices(JOB_STATUSES))
    .option("--json", "print {jobs: [...]} as the API lists them")
    .action(
      bind(async (ctx, c) => {
        const raw = c.optsWithGlobals() as { sandbox?: string; request?: string; status?: string; json?: boolean };
        return run(parseListOptions(raw, sandboxOf(ctx, raw.sandbox)), ctx);
      }),
    );
  declareChoices(cmd, "--status", JOB_STATUSES);
  withExamples(cmd, [
    { command: "sbx jobs list", description: "every job of the default sandbox" },
    { command: "sbx jobs list --request ci-1234", description: "the jobs of one submission" },
    { command: "sbx jobs list --status failed --json", description: "failed jobs, for scripts" },
  ]);
}
