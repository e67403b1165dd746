// sbx sandbox update

import { randomUUID } from "../../../platform/random.js";
import { UsageError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import type { SandboxLimitsRequest } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import { checkSandboxRef } from "../../command-flags.js";
import type { Context } from "../../context.js";
import { wholeSandboxRef } from "../../id-prefix.js";
import { refusalIsUsage } from "../../refusal.js";
import { type LimitFlagValues, limitLines, parseLimitFlags } from "../../render/limits.js";
import { printJson } from "../../render/outcome.js";
import { sandboxDetailsDocument } from "./render.js";

export async function run(
  opts: { ref: string; limits: SandboxLimitsRequest; json: boolean },
  ctx: Context,
): Promise<number> {
  if (Object.keys(opts.limits).length === 0) {
    throw new UsageError("nothing to change: give a limit (--memory, --pids, --cpus, --tmp-size, --disk)");
  }
  const api = await ctx.api();
  const sandbox = await refusalIsUsage(
    () => api.updateSandbox(opts.ref, { limits: opts.limits }, `sbx-${randomUUID()}`),
    "its limits were not changed",
  );
  if (opts.json) {
    printJson(ctx, sandboxDetailsDocument(sandbox));
    return ExitCodes.ok;
  }
  ctx.io.info(`sbx: updated sandbox ${sandbox.name}`);
  for (const [k, v] of limitLines(sandbox.limit_status ?? [])) ctx.io.out(`${k}\t${v}`);
  return ExitCodes.ok;
}

/** Bound to `sbx sandbox update` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as LimitFlagValues & { json?: boolean };
  const limits = parseLimitFlags(raw);
  return run({ ref: await wholeSandboxRef(ctx, checkSandboxRef(c.args[0]!)), limits, json: raw.json === true }, ctx);
};
