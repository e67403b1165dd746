// sbx process stop: TERM, the grace, KILL to the group; the process is kept.

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { graceMs } from "./mutation.js";
import { resolveProcess } from "./target.js";

export interface StopOptions {
  ref: string;
  sandbox: string | undefined;
  graceMs: number;
  json: boolean;
}

export async function run(opts: StopOptions, ctx: Context): Promise<number> {
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  const p = await t.api.stop(t.sandbox, t.processId, opts.graceMs);
  if (opts.json) printJson(ctx, p);
  else ctx.io.out(`${p.process_id}\t${p.state}\t${p.outcome}${p.signal ? `\t${p.signal}` : ""}`);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("stop")
    .summary("stop a process: TERM, grace, KILL to its group")
    .description(
      "Stop a process (no more restarts): SIGTERM to its group, then SIGKILL after the grace. It is kept, with its logs.",
    )
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--grace <dur>", "time between TERM and KILL, up to 60s (default: 5s)")
    .option("--json", "print the process record afterwards")
    .action(
      bind(async (ctx, c) => {
        const o = c.optsWithGlobals() as { sandbox?: string; grace?: string; json?: boolean };
        return run({ ref: c.args[0]!, sandbox: o.sandbox, graceMs: graceMs(o.grace), json: o.json === true }, ctx);
      }),
    );
  withExamples(cmd, [{ command: "sbx process stop web --grace 10s", description: "give it 10s to shut down" }]);
}
