import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { newKey, normalizeSignal } from "./mutation.js";
import { handleOf, resolveProcess, splitRun } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface SignalOptions {
  ref: string;
  sandbox: string | undefined;
  signal: string;
  /** The run it is meant for (prc_…@N or --run N); the current one when undefined. */
  run: string | undefined;
  json: boolean;
}

export async function run(opts: SignalOptions, ctx: Context): Promise<number> {
  const fenced = splitRun(opts.ref, opts.run);
  const t = await resolveProcess(ctx, fenced.ref, opts.sandbox);
  const a = await t.api.signal(t.sandbox, t.processId, opts.signal, newKey(), handleOf(t, fenced.run));
  if (opts.json) printJson(ctx, a);
  else ctx.io.info(`sbx: sent ${a.signal} to ${t.processId} (pid ${a.os_pid})`);
  return ExitCodes.ok;
}

/** Bound to `sbx process signal` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run(
    {
      ref: c.args[0]!,
      sandbox: c.opts().sandbox,
      signal: normalizeSignal(c.args[1]!),
      run: c.opts().run,
      json: c.optsWithGlobals().json === true,
    },
    ctx,
  );
