// sbx jobs logs: a job's kept output, raw, in order (stdout to stdout, stderr to
// stderr); -f follows it until the job has ended.

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { jobsApi, SANDBOX_FLAG, sandboxOf } from "./target.js";
import { readJobOutput } from "./waiting.js";

export interface LogsOptions {
  jobId: string;
  sandbox: string;
  follow: boolean;
  json: boolean;
}

export async function run(opts: LogsOptions, ctx: Context): Promise<number> {
  const api = await jobsApi(ctx);
  const job = await readJobOutput(ctx, api, opts.sandbox, opts.jobId, opts.follow, {
    chunk: (c, data) => {
      if (opts.json) ctx.io.out(JSON.stringify({ seq: c.seq, stream: c.stream, offset: c.offset, data: c.data }));
      else if (c.stream === "stdout") ctx.io.writeOut(data);
      else ctx.io.writeErr(data);
    },
    omitted: (bytes) => ctx.io.err(`sbx: ${bytes} bytes of output were not kept here (the job's output budget)`),
  });
  if (job === null) return 130;
  if (opts.follow && !opts.json) ctx.io.info(`sbx: ${job.job_id} ${job.status}`);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("logs")
    .summary("print a job's output (-f to follow)")
    .description(
      "Print a job's kept output as it was produced: its stdout on stdout and its stderr on stderr,\n" +
        "raw. Past the job's output budget the backend keeps the first and the last part; sbx says on\n" +
        "stderr where bytes are missing. With -f it follows the job (server-side waits) until it has\n" +
        "ended and everything was read. --json prints each chunk as {seq, stream, offset, data} (JSON Lines).",
    )
    .argument("<job>", "job id")
    .option(...SANDBOX_FLAG)
    .option("-f, --follow", "follow until the job has ended")
    .option("--json", "one JSON document per output chunk (JSON Lines)")
    .action(
      bind(async (ctx, c) => {
        const raw = c.optsWithGlobals() as { sandbox?: string; follow?: boolean; json?: boolean };
        const opts = {
          jobId: c.args[0]!,
          sandbox: sandboxOf(ctx, raw.sandbox),
          follow: raw.follow === true,
          json: raw.json === true,
        };
        return run(opts, ctx);
      }),
    );
  withExamples(cmd, [
    { command: "sbx jobs logs job_3f2a… -f", description: "follow a running job's output" },
    { command: "sbx jobs logs job_3f2a… > out.txt 2> err.txt", description: "the two streams apart" },
  ]);
}
