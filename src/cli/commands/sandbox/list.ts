// sbx sandbox list

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printSandboxes, sandboxDocument } from "./render.js";

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const sandboxes = await (await ctx.api()).listSandboxes();
  if (opts.json) printJson(ctx, { sandboxes: sandboxes.map(sandboxDocument) });
  else printSandboxes(ctx.io, sandboxes);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("list")
    .alias("ls")
    .summary("list sandboxes")
    .description("List the backend's sandboxes.")
    .option("--json", "print {sandboxes: [...]}")
    .action(bind(async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx)));
  withExamples(cmd, [{ command: "sbx sandbox list", description: "all sandboxes" }]);
}
