// sbx process list (alias: sbx ps)

import type { ProcessRecord } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { cell, formatTime, printTable } from "../../render/table.js";
import { processesApi } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { sandboxIdFor } from "../../id-prefix.js";

export function commandOf(p: Pick<ProcessRecord, "command">): string {
  return typeof p.command === "string" ? `sh -c ${JSON.stringify(p.command)}` : p.command.join(" ");
}

export async function run(opts: { sandbox: string; json: boolean }, ctx: Context): Promise<number> {
  const processes = await (await processesApi(ctx)).list(opts.sandbox);
  if (opts.json) {
    printJson(ctx, { processes });
    return ExitCodes.ok;
  }
  const { io } = ctx;
  await printTable(
    io,
    ["PROCESS", "NAME", "STATE", "OUTCOME", "RESTARTS", "PID", "COMMAND", "STARTED"],
    processes.map((p) => [
      p.process_id,
      p.name ?? "-",
      p.state === "running" ? io.chalk.green(p.state) : p.state,
      p.outcome,
      String(p.restarts),
      p.os_pid === null ? "-" : String(p.os_pid),
      cell(io, commandOf(p)),
      formatTime(io, p.started_at),
    ]),
    { shrink: "COMMAND" },
  );
  return ExitCodes.ok;
}

/** Bound to `sbx process list` and `sbx ps` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run({ sandbox: await sandboxIdFor(ctx, c.opts().sandbox), json: c.optsWithGlobals().json === true }, ctx);
