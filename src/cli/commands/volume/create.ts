// sbx volume create NAME [--size SIZE]

import { randomUUID } from "../../../platform/random.js";
import { volumeNameProblem } from "../../../protocol/volumes.js";
import { UsageError } from "../../../common/errors.js";
import { parseSize } from "../../../common/sizes.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { refusalIsUsage } from "../../refusal.js";
import { printJson } from "../../render/outcome.js";
import { printVolumes, volumeDocument } from "./render.js";

export async function run(
  opts: { name: string; json: boolean; size?: string | undefined },
  ctx: Context,
): Promise<number> {
  const problem = volumeNameProblem(opts.name);
  if (problem !== null) throw new UsageError(problem);
  const size = opts.size === undefined ? null : parseSize(opts.size);
  if (opts.size !== undefined && (size === null || size < 16 * 1024 * 1024)) {
    throw new UsageError(`--size ${opts.size}: a size of at least 16MiB, e.g. 512MiB or 2GiB`);
  }
  const api = await ctx.api();
  const volume = await refusalIsUsage(
    () => api.createVolume(opts.name, `sbx-${randomUUID()}`, size),
    "no volume was created",
  );
  if (opts.json) printJson(ctx, volumeDocument(volume));
  else await printVolumes(ctx.io, [volume]);
  return ExitCodes.ok;
}

/** Bound to `sbx volume create` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals();
  return run({ name: c.args[0]!, json: o.json === true, size: o.size as string | undefined }, ctx);
};
