import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { graceMs } from "./mutation.js";
import { resolveProcess } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(
  opts: { ref: string; sandbox: string | undefined; graceMs: number },
  ctx: Context,
): Promise<number> {
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  await t.api.remove(t.sandbox, t.processId, opts.graceMs);
  ctx.io.info(`sbx: removed ${t.processId}`);
  return ExitCodes.ok;
}

/** Bound to `sbx process rm` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.opts() as { sandbox?: string; grace?: string };
  return run({ ref: c.args[0]!, sandbox: o.sandbox, graceMs: graceMs(o.grace) }, ctx);
};
