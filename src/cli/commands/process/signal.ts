// sbx process signal: a signal to the process's whole group.

import type { Command } from "commander";
import { type Bind, declareChoices, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { PROCESS_SIGNALS } from "../../../protocol/types.js";
import { newKey, normalizeSignal } from "./mutation.js";
import { resolveProcess } from "./target.js";

export interface SignalOptions {
  ref: string;
  sandbox: string | undefined;
  signal: string;
  json: boolean;
}

export async function run(opts: SignalOptions, ctx: Context): Promise<number> {
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  const a = await t.api.signal(t.sandbox, t.processId, opts.signal, newKey());
  if (opts.json) printJson(ctx, a);
  else ctx.io.info(`sbx: sent ${a.signal} to ${t.processId} (pid ${a.os_pid})`);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("signal")
    .summary("send a signal to a process's group")
    .description(`Send a signal to the process's whole group: ${PROCESS_SIGNALS.join(", ")} (SIG prefix optional).`)
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .argument("<signal>", "TERM, INT, HUP, KILL, USR1 or USR2")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--json", "print the acknowledgement")
    .action(
      bind(async (ctx, c) =>
        run(
          {
            ref: c.args[0]!,
            sandbox: c.opts().sandbox,
            signal: normalizeSignal(c.args[1]!),
            json: c.optsWithGlobals().json === true,
          },
          ctx,
        ),
      ),
    );
  declareChoices(cmd, "<signal>", PROCESS_SIGNALS);
  withExamples(cmd, [{ command: "sbx process signal web HUP", description: "ask it to reload" }]);
}
