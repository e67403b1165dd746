import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { durationOption } from "../../duration.js";
import { printJson } from "../../render/outcome.js";
import { resolveProcess } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function runResult(
  opts: { ref: string; sandbox: string | undefined; waitMs: number; json: boolean },
  ctx: Context,
): Promise<number> {
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  const until = Date.now() + opts.waitMs;
  let r = await t.api.result(t.sandbox, t.processId, Math.min(opts.waitMs, 60_000));
  while (!r.complete && Date.now() < until && !ctx.interrupt.aborted) {
    r = await t.api.result(t.sandbox, t.processId, Math.min(60_000, until - Date.now()));
  }
  if (opts.json) {
    printJson(ctx, r);
  } else {
    ctx.io.out(`outcome\t${r.outcome}`);
    ctx.io.out(`exit_code\t${r.exit_code ?? "-"}`);
    ctx.io.out(`signal\t${r.signal ?? "-"}`);
    ctx.io.out(`complete\t${r.complete}`);
    ctx.io.out(`restarts\t${r.restarts}`);
    for (const s of ["stdout", "stderr"] as const) {
      const c = r.output_capture[s];
      ctx.io.out(`${s}\t${c.bytes} bytes${c.rotated ? `, oldest kept at offset ${c.oldest_offset}` : ""}`);
    }
    if (r.stdout_tail) ctx.io.out(`--- stdout (tail)\n${r.stdout_tail.replace(/\n$/, "")}`);
    if (r.stderr_tail) ctx.io.out(`--- stderr (tail)\n${r.stderr_tail.replace(/\n$/, "")}`);
  }
  return r.complete ? ExitCodes.ok : opts.waitMs > 0 ? ExitCodes.inDoubt : ExitCodes.ok;
}

/** Bound to `sbx process result` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals() as { sandbox?: string; wait?: string; json?: boolean };
  const waitMs = o.wait === undefined ? 0 : durationOption("--wait", o.wait);
  return runResult({ ref: c.args[0]!, sandbox: o.sandbox, waitMs, json: o.json === true }, ctx);
};
