import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { graceMs } from "./mutation.js";
import { handleOf, resolveProcess, splitRun } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface StopOptions {
  ref: string;
  sandbox: string | undefined;
  graceMs: number;
  /** The run it is meant for (prc_…@N or --run N); the current one when undefined. */
  run: string | undefined;
  json: boolean;
}

export async function run(opts: StopOptions, ctx: Context): Promise<number> {
  const fenced = splitRun(opts.ref, opts.run);
  const t = await resolveProcess(ctx, fenced.ref, opts.sandbox);
  const p = await t.api.stop(t.sandbox, t.processId, opts.graceMs, handleOf(t, fenced.run));
  if (opts.json) printJson(ctx, p);
  else ctx.io.out(`${p.process_id}\t${p.state}\t${p.outcome}${p.signal ? `\t${p.signal}` : ""}`);
  return ExitCodes.ok;
}

/** Bound to `sbx process stop` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals() as { sandbox?: string; grace?: string; run?: string; json?: boolean };
  return run(
    { ref: c.args[0]!, sandbox: o.sandbox, graceMs: graceMs(o.grace), run: o.run, json: o.json === true },
    ctx,
  );
};
