import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { checkSandboxRef } from "../../command-flags.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { wholeSandboxRef } from "../../id-prefix.js";

export async function run(opts: { ref: string; force: boolean; json: boolean }, ctx: Context): Promise<number> {
  const progress = opts.force ? ctx.io.progress(`ending what runs in ${opts.ref}, then removing it…`) : null;
  try {
    await (await ctx.api()).removeSandbox(opts.ref, { force: opts.force });
  } finally {
    progress?.stop();
  }
  if (opts.json) printJson(ctx, { removed: opts.ref });
  else ctx.io.info(`sbx: removed sandbox ${opts.ref} and its workspace`);
  return ExitCodes.ok;
}

/** Bound to `sbx sandbox rm` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run(
    {
      ref: await wholeSandboxRef(ctx, checkSandboxRef(c.args[0]!)),
      force: c.opts().force === true,
      json: c.optsWithGlobals().json === true,
    },
    ctx,
  );
