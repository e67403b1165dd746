// sbx profile rm

import { LOCAL_PROFILE } from "../../../config/config.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { NotFoundError, UsageError } from "../../../common/errors.js";
import { checkProfileName } from "./add.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(opts: { name: string }, ctx: Context): Promise<number> {
  if (opts.name === LOCAL_PROFILE) throw new UsageError("`local` is built in and cannot be removed");
  ctx.config.update((doc) => {
    if (!doc.profiles[opts.name]) throw new NotFoundError(`no profile named ${JSON.stringify(opts.name)}`);
    delete doc.profiles[opts.name];
    if (doc.current_profile === opts.name) delete doc.current_profile;
  });
  ctx.config.setApiKey(opts.name, undefined);
  ctx.io.info(`sbx: removed profile ${opts.name} and its key`);
  return ExitCodes.ok;
}

/** Bound to `sbx profile rm` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ name: checkProfileName(c.args[0]!) }, ctx);
