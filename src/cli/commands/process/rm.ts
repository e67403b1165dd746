// sbx process rm: stop it if it runs, then remove it.

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { graceMs } from "./mutation.js";
import { resolveProcess } from "./target.js";

export async function run(
  opts: { ref: string; sandbox: string | undefined; graceMs: number },
  ctx: Context,
): Promise<number> {
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  await t.api.remove(t.sandbox, t.processId, opts.graceMs);
  ctx.io.info(`sbx: removed ${t.processId}`);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("rm")
    .summary("stop (if running) and remove a process")
    .description("Stop a process if it runs (TERM, grace, KILL) and remove it and its logs.")
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--grace <dur>", "time between TERM and KILL, up to 60s (default: 5s)")
    .action(
      bind(async (ctx, c) => {
        const o = c.opts() as { sandbox?: string; grace?: string };
        return run({ ref: c.args[0]!, sandbox: o.sandbox, graceMs: graceMs(o.grace) }, ctx);
      }),
    );
  withExamples(cmd, [{ command: "sbx process rm web", description: "stop and forget it" }]);
}
