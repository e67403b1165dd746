// sbx volume rm NAME: refused while a sandbox mounts it (the backend names them).

import { randomUUID } from "../../../platform/random.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { volumeDocument } from "./render.js";

export async function run(opts: { name: string; json: boolean }, ctx: Context): Promise<number> {
  const removed = await (await ctx.api()).removeVolume(opts.name, `sbx-${randomUUID()}`);
  if (opts.json) printJson(ctx, { removed: volumeDocument(removed) });
  else ctx.io.info(`sbx: removed volume ${removed.name} and its files`);
  return ExitCodes.ok;
}

/** Bound to `sbx volume rm` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ name: c.args[0]!, json: c.optsWithGlobals().json === true }, ctx);
