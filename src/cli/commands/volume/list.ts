// sbx volume list

import { ExitCodes } from "../../../common/exit-codes.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printVolumes, volumeDocument } from "./render.js";

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const volumes = await (await ctx.api()).listVolumes();
  if (opts.json) printJson(ctx, { volumes: volumes.map(volumeDocument) });
  else await printVolumes(ctx.io, volumes);
  return ExitCodes.ok;
}

/** Bound to `sbx volume list` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx);
