// sbx process rm: stop it if it runs, then remove it.

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import { graceMs } from "./mutation.js";
import { resolveProcess } from "./target.js";

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
        const t = await resolveProcess(ctx, c.args[0]!, o.sandbox);
        await t.api.remove(t.sandbox, t.processId, graceMs(o.grace));
        ctx.io.info(`sbx: removed ${t.processId}`);
        return 0;
      }),
    );
  withExamples(cmd, [{ command: "sbx process rm web", description: "stop and forget it" }]);
}
