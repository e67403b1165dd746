// sbx config set KEY VALUE

import { SETTINGS } from "../../../config/config.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { UsageError } from "../../../common/errors.js";
import { checkKey } from "./get.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function runSet(opts: { key: string; value: string }, ctx: Context): Promise<number> {
  const problem = SETTINGS[checkKey(opts.key)]!.check(opts.value);
  if (problem !== null) throw new UsageError(`${opts.key}: ${problem}`);
  ctx.config.update((doc) => {
    doc.settings[opts.key] = opts.value;
  });
  return ExitCodes.ok;
}

/** Bound to `sbx config set` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => runSet({ key: c.args[0]!, value: c.args[1]! }, ctx);
