// sbx profile use

import { LOCAL_PROFILE } from "../../../config/config.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { NotFoundError } from "../../../common/errors.js";
import { checkProfileName } from "./add.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(opts: { name: string }, ctx: Context): Promise<number> {
  ctx.config.update((doc) => {
    if (opts.name !== LOCAL_PROFILE && !doc.profiles[opts.name]) {
      throw new NotFoundError(`no profile named ${JSON.stringify(opts.name)}`, "see `sbx profile list`");
    }
    doc.current_profile = opts.name;
  });
  ctx.io.info(`sbx: now using profile ${opts.name}`);
  return ExitCodes.ok;
}

/** Bound to `sbx profile use` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ name: checkProfileName(c.args[0]!) }, ctx);
