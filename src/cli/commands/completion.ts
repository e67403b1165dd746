// sbx completion bash|zsh|fish: print a completion script generated from the command tree.

import type { Command } from "commander";
import { type Bind, declareChoices, withExamples } from "../command.js";
import type { Context } from "../context.js";
import { SHELLS, type Shell } from "../docs/shells.js";
import { UsageError } from "../errors.js";

export async function run(opts: { shell: string }, ctx: Context, program: Command): Promise<number> {
  if (!SHELLS.includes(opts.shell as Shell)) {
    throw new UsageError(`unknown shell ${JSON.stringify(opts.shell)}`, `one of: ${SHELLS.join(", ")}`);
  }
  // The generator walks the whole tree: loaded only when asked for.
  const { generateCompletion } = await import("../docs/completions.js");
  ctx.io.writeOut(generateCompletion(program, opts.shell as Shell));
  return 0;
}

export function register(program: Command, bind: Bind): void {
  const cmd = program
    .command("completion")
    .summary("print a shell completion script (bash, zsh, fish)")
    .description("Print a completion script for bash, zsh or fish, generated from sbx's command tree.")
    .argument("<shell>", "bash, zsh or fish")
    .action(bind(async (ctx, c) => run({ shell: c.args[0]! }, ctx, program)));
  declareChoices(cmd, "<shell>", SHELLS);
  withExamples(cmd, [
    { command: "sbx completion bash > ~/.local/share/bash-completion/completions/sbx", description: "bash" },
    { command: 'sbx completion zsh > "${fpath[1]}/_sbx"', description: "zsh" },
    { command: "sbx completion fish > ~/.config/fish/completions/sbx.fish", description: "fish" },
  ]);
}
