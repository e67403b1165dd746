// sbx sandbox egress: a sandbox's connections through its egress proxy (docs/network.md).

import type { EgressConnection, EgressReport } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import { checkSandboxRef } from "../../command-flags.js";
import type { Context } from "../../context.js";
import { wholeSandboxRef } from "../../id-prefix.js";
import { printJson } from "../../render/outcome.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(opts: { ref: string; json: boolean }, ctx: Context): Promise<number> {
  const report = await (await ctx.api()).sandboxEgress(opts.ref);
  if (opts.json) {
    printJson(ctx, report);
    return ExitCodes.ok;
  }
  for (const line of egressLines(report)) ctx.io.out(line);
  return ExitCodes.ok;
}

/** The report as lines: a summary, then one line per connection (tab-separated). */
export function egressLines(report: EgressReport): string[] {
  const lines = [
    `sandbox ${report.name}: network ${report.network_mode}; ${report.allowed_total} allowed, ${report.denied_total} refused since the daemon started`,
  ];
  if (report.network_mode !== "allow-list") lines.push("(no egress proxy: its network is not an allow-list)");
  else if (report.connections.length === 0) lines.push("(no connections yet)");
  for (const c of report.connections) lines.push(connectionLine(c));
  return lines;
}

function connectionLine(c: EgressConnection): string {
  const verdict = c.allowed ? (c.reason === null ? "allowed" : "failed") : "DENIED";
  const target = c.host === "" ? "-" : `${c.host.includes(":") ? `[${c.host}]` : c.host}:${c.port}`;
  const state = c.ended_at === null ? "open" : `${c.bytes_out}B out ${c.bytes_in}B in`;
  return [c.at, verdict, target, c.protocol, state, c.reason ?? ""].join("\t").trimEnd();
}

/** Bound to `sbx sandbox egress` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run({ ref: await wholeSandboxRef(ctx, checkSandboxRef(c.args[0]!)), json: c.optsWithGlobals().json === true }, ctx);
