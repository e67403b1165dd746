import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { graceMs } from "./mutation.js";
import { resolveProcess } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface StopOptions {
  ref: string;
  sandbox: string | undefined;
  graceMs: number;
  json: boolean;
}

export async function run(opts: StopOptions, ctx: Context): Promise<number> {
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  const p = await t.api.stop(t.sandbox, t.processId, opts.graceMs);
  if (opts.json) printJson(ctx, p);
  else ctx.io.out(`${p.process_id}\t${p.state}\t${p.outcome}${p.signal ? `\t${p.signal}` : ""}`);
  return ExitCodes.ok;
}

/** Bound to `sbx process stop` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals() as { sandbox?: string; grace?: string; json?: boolean };
  return run({ ref: c.args[0]!, sandbox: o.sandbox, graceMs: graceMs(o.grace), json: o.json === true }, ctx);
};
