// sbx sandbox show

import type { Command } from "commander";
import { isValidSandboxRef } from "../../../protocol/validate.js";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { UsageError } from "../../errors.js";
import { printJson } from "../../render/outcome.js";
import { printSandboxes, sandboxDocument } from "./render.js";

export function checkSandboxRef(ref: string): string {
  if (!isValidSandboxRef(ref)) {
    throw new UsageError(`invalid sandbox ${JSON.stringify(ref)}: use a sandbox id or name (letters, digits, _ . -)`);
  }
  return ref;
}

export async function run(opts: { ref: string; json: boolean }, ctx: Context): Promise<number> {
  const sandbox = await (await ctx.api()).getSandbox(opts.ref);
  if (opts.json) printJson(ctx, sandboxDocument(sandbox));
  else printSandboxes(ctx.io, [sandbox]);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("show")
    .summary("show one sandbox")
    .description("Show a sandbox by id or name.")
    .argument("<id>", "sandbox id or name")
    .option("--json", "print the sandbox as JSON")
    .action(
      bind(async (ctx, c) => run({ ref: checkSandboxRef(c.args[0]!), json: c.optsWithGlobals().json === true }, ctx)),
    );
  withExamples(cmd, [{ command: "sbx sandbox show default --json", description: "the default sandbox" }]);
}
