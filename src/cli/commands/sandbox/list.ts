import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printSandboxes, sandboxDocument } from "./render.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const sandboxes = await (await ctx.api()).listSandboxes();
  if (opts.json) printJson(ctx, { sandboxes: sandboxes.map(sandboxDocument) });
  else await printSandboxes(ctx.io, sandboxes);
  return ExitCodes.ok;
}

/** Bound to `sbx sandbox list` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx);
