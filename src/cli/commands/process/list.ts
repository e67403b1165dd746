// sbx process list (alias: sbx ps)

import type { Command } from "commander";
import type { ProcessRecord } from "../../../protocol/types.js";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { cell, formatTime, printTable } from "../../render/table.js";
import { processesApi, sandboxOf } from "./target.js";

export function commandOf(p: Pick<ProcessRecord, "command">): string {
  return typeof p.command === "string" ? `sh -c ${JSON.stringify(p.command)}` : p.command.join(" ");
}

export async function run(opts: { sandbox: string; json: boolean }, ctx: Context): Promise<number> {
  const processes = await (await processesApi(ctx)).list(opts.sandbox);
  if (opts.json) {
    printJson(ctx, { processes });
    return 0;
  }
  const { io } = ctx;
  printTable(
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
  );
  return 0;
}

export function configureList(cmd: Command, bind: Bind): Command {
  return cmd
    .option("-s, --sandbox <id>", "sandbox id or name (default: default)")
    .option("--json", "print {processes: [...]}")
    .action(
      bind(async (ctx, c) =>
        run({ sandbox: sandboxOf(c.opts().sandbox), json: c.optsWithGlobals().json === true }, ctx),
      ),
    );
}

export function register(noun: Command, bind: Bind): void {
  const cmd = configureList(
    noun.command("list").summary("list supervised processes").description("List a sandbox's supervised processes."),
    bind,
  );
  withExamples(cmd, [
    { command: "sbx process list", description: "processes of the default sandbox" },
    { command: "sbx ps --json", description: "the same, as JSON" },
  ]);
}
