// sbx sandbox rm

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { checkSandboxRef } from "./show.js";

export async function run(opts: { ref: string; force: boolean; json: boolean }, ctx: Context): Promise<number> {
  const progress = opts.force ? ctx.io.progress(`ending what runs in ${opts.ref}, then removing it…`) : null;
  try {
    await (await ctx.api()).removeSandbox(opts.ref, { force: opts.force });
  } finally {
    progress?.stop();
  }
  if (opts.json) printJson(ctx, { removed: opts.ref });
  else ctx.io.info(`sbx: removed sandbox ${opts.ref} and its workspace`);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("rm")
    .summary("remove a sandbox and its workspace")
    .description(
      "Remove a sandbox and its workspace (every file in it). Refused while an execution runs\n" +
        "or a supervised process is not ended in it, unless --force: then those are cancelled\n" +
        "and stopped first.",
    )
    .argument("<id>", "sandbox id or name")
    .option("-f, --force", "cancel its executions and stop its processes first")
    .option("--json", "print {removed}")
    .action(
      bind(async (ctx, c) =>
        run(
          {
            ref: checkSandboxRef(c.args[0]!),
            force: c.opts().force === true,
            json: c.optsWithGlobals().json === true,
          },
          ctx,
        ),
      ),
    );
  withExamples(cmd, [
    { command: "sbx sandbox rm build", description: "remove the build sandbox" },
    { command: "sbx sandbox rm build --force", description: "even while something runs in it" },
  ]);
}
