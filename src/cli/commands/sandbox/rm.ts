// sbx sandbox rm

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { checkSandboxRef } from "./show.js";

export async function run(opts: { ref: string; json: boolean }, ctx: Context): Promise<number> {
  await (await ctx.api()).removeSandbox(opts.ref);
  if (opts.json) printJson(ctx, { removed: opts.ref });
  else ctx.io.info(`sbx: removed sandbox ${opts.ref} and its workspace`);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("rm")
    .summary("remove a sandbox and its workspace")
    .description("Remove a sandbox and its workspace. Refused while it has running executions.")
    .argument("<id>", "sandbox id or name")
    .option("--json", "print {removed}")
    .action(
      bind(async (ctx, c) => run({ ref: checkSandboxRef(c.args[0]!), json: c.optsWithGlobals().json === true }, ctx)),
    );
  withExamples(cmd, [{ command: "sbx sandbox rm build", description: "remove the build sandbox" }]);
}
