// sbx sandbox start: start a sandbox's environment now instead of at its next command.

import { randomUUID } from "../../../platform/random.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { checkSandboxRef } from "../../command-flags.js";
import { printJson } from "../../render/outcome.js";
import { sandboxDetailsDocument } from "./render.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(opts: { ref: string; json: boolean }, ctx: Context): Promise<number> {
  const progress = ctx.io.progress(`starting ${opts.ref}…`);
  let sandbox: Awaited<ReturnType<Awaited<ReturnType<Context["api"]>>["startSandbox"]>>;
  try {
    sandbox = await (await ctx.api()).startSandbox(opts.ref, `sbx-${randomUUID()}`);
  } finally {
    progress.stop();
  }
  if (opts.json) {
    printJson(ctx, sandboxDetailsDocument(sandbox));
    return ExitCodes.ok;
  }
  const env = sandbox.environment;
  ctx.io.info(
    env === null || env === undefined
      ? `sbx: sandbox ${sandbox.name} runs each command on its own (isolation ${sandbox.isolation}): nothing to start`
      : `sbx: sandbox ${sandbox.name} is ${env.state}${env.init_pid === null ? "" : ` (init pid ${env.init_pid})`}`,
  );
  return ExitCodes.ok;
}

/** Bound to `sbx sandbox start` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run({ ref: checkSandboxRef(c.args[0]!), json: c.optsWithGlobals().json === true }, ctx);
