// sbx volume create NAME

import { randomUUID } from "../../../platform/random.js";
import { volumeNameProblem } from "../../../protocol/volumes.js";
import { UsageError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { refusalIsUsage } from "../../refusal.js";
import { printJson } from "../../render/outcome.js";
import { printVolumes, volumeDocument } from "./render.js";

export async function run(opts: { name: string; json: boolean }, ctx: Context): Promise<number> {
  const problem = volumeNameProblem(opts.name);
  if (problem !== null) throw new UsageError(problem);
  const api = await ctx.api();
  const volume = await refusalIsUsage(
    () => api.createVolume(opts.name, `sbx-${randomUUID()}`),
    "no volume was created",
  );
  if (opts.json) printJson(ctx, volumeDocument(volume));
  else await printVolumes(ctx.io, [volume]);
  return ExitCodes.ok;
}

/** Bound to `sbx volume create` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ name: c.args[0]!, json: c.optsWithGlobals().json === true }, ctx);
