// sbx process stop: TERM, the grace, KILL to the group; the process is kept.

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import { printJson } from "../../render/outcome.js";
import { graceMs } from "./mutation.js";
import { resolveProcess } from "./target.js";

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
        const t = await resolveProcess(ctx, c.args[0]!, o.sandbox);
        const p = await t.api.stop(t.sandbox, t.processId, graceMs(o.grace));
        if (o.json) printJson(ctx, p);
        else ctx.io.out(`${p.process_id}\t${p.state}\t${p.outcome}${p.signal ? `\t${p.signal}` : ""}`);
        return 0;
      }),
    );
  withExamples(cmd, [{ command: "sbx process stop web --grace 10s", description: "give it 10s to shut down" }]);
}
