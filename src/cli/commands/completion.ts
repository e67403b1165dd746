// sbx completion bash|zsh|fish: print a completion script generated from the command tree.

import type { Command } from "commander";
import { completeTree, type RunFn } from "../command.js";
import type { Context } from "../context.js";
import { SHELLS, type Shell } from "../docs/shells.js";
import { UsageError } from "../../common/errors.js";
import { ExitCodes } from "../../common/exit-codes.js";

export async function run(opts: { shell: string }, ctx: Context, program: Command): Promise<number> {
  if (!SHELLS.includes(opts.shell as Shell)) {
    throw new UsageError(`unknown shell ${JSON.stringify(opts.shell)}`, `one of: ${SHELLS.join(", ")}`);
  }
  // The generator walks the whole tree: loaded only when asked for.
  const { generateCompletion } = await import("../docs/completions.js");
  ctx.io.writeOut(generateCompletion(program, opts.shell as Shell));
  return ExitCodes.ok;
}

/** Bound to `sbx completion` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ shell: c.args[0]! }, ctx, completeTree(c));
