// sbx process result: outcome, exit code or signal, completeness, capture state, tails.

import type { Command } from "commander";
import { type Bind, declareCompletion, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { durationOption } from "../../duration.js";
import { printJson } from "../../render/outcome.js";
import { resolveProcess } from "./target.js";
import { ExitCodes } from "../../errors.js";

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

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("result")
    .summary("a process's outcome, exit code and output tails")
    .description(
      "Print a process's result: outcome (pending|succeeded|failed|cancelled|timed_out|unknown),\n" +
        "exit code or signal (null until known), whether it is complete, capture state and tails.\n" +
        "With --wait, wait up to DUR for it to complete (exit 255 if it does not).",
    )
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--wait <dur>", "wait up to DUR for the process to complete")
    .option("--json", "print the result document")
    .action(
      bind(async (ctx, c) => {
        const o = c.optsWithGlobals() as { sandbox?: string; wait?: string; json?: boolean };
        const waitMs = o.wait === undefined ? 0 : durationOption("--wait", o.wait);
        return runResult({ ref: c.args[0]!, sandbox: o.sandbox, waitMs, json: o.json === true }, ctx);
      }),
    );
  declareCompletion(cmd, "<process>", "receipt-id");
  withExamples(cmd, [{ command: "sbx process result prc_12ab --wait 5m", description: "wait for it to finish" }]);
}
