// sbx process list (alias: sbx ps)

import type { ProcessRecord } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { cell, formatTime, printTable } from "../../render/table.js";
import { processesApi } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { UsageError } from "../../../common/errors.js";
import { sandboxIdFor } from "../../id-prefix.js";

export function commandOf(p: Pick<ProcessRecord, "command">): string {
  return typeof p.command === "string" ? `sh -c ${JSON.stringify(p.command)}` : p.command.join(" ");
}

/** A process as listed: with -A, the name of its sandbox beside it. */
type Listed = ProcessRecord & { sandbox?: string };

export async function run(opts: { sandbox: string | null; json: boolean }, ctx: Context): Promise<number> {
  const api = await processesApi(ctx);
  let processes: Listed[];
  if (opts.sandbox === null) {
    // -A: every sandbox's, each sandbox in the order the backend lists them.
    const sandboxes = await (await ctx.api()).listSandboxes();
    const each = await Promise.all(
      sandboxes.map(async (s) => (await api.list(s.sandbox_id)).map((p) => ({ ...p, sandbox: s.name }))),
    );
    processes = each.flat();
  } else {
    processes = await api.list(opts.sandbox);
  }
  if (opts.json) {
    printJson(ctx, { processes });
    return ExitCodes.ok;
  }
  const { io } = ctx;
  const all = opts.sandbox === null;
  await printTable(
    io,
    [...(all ? ["SANDBOX"] : []), "PROCESS", "NAME", "STATE", "OUTCOME", "RESTARTS", "PID", "COMMAND", "STARTED"],
    processes.map((p) => [
      ...(all ? [p.sandbox ?? "-"] : []),
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
export const action: RunFn = async (ctx, c) => {
  const flags = c.opts() as { sandbox?: string; allSandboxes?: boolean };
  if (flags.allSandboxes === true && flags.sandbox !== undefined) {
    throw new UsageError("-A (--all-sandboxes) and -s (--sandbox) cannot go together");
  }
  const sandbox = flags.allSandboxes === true ? null : await sandboxIdFor(ctx, flags.sandbox);
  return run({ sandbox, json: c.optsWithGlobals().json === true }, ctx);
};
