// sbx sandbox egress: a sandbox's connections through its egress proxy (docs/network.md,
// "Evidence"); with -f, then each connection as it is decided and as it ends, until
// interrupted (asked every FOLLOW_INTERVAL_MS with `since`: what changed since the last).

import type { EgressConnection, EgressReport } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import { checkSandboxRef } from "../../command-flags.js";
import type { Context } from "../../context.js";
import { wholeSandboxRef } from "../../id-prefix.js";
import { printJson } from "../../render/outcome.js";
import { ExitCodes } from "../../../common/exit-codes.js";

/** How often -f asks the backend what changed. */
export const FOLLOW_INTERVAL_MS = 500;

export async function run(opts: { ref: string; json: boolean; follow: boolean }, ctx: Context): Promise<number> {
  const api = await ctx.api();
  let report = await api.sandboxEgress(opts.ref);
  if (!opts.follow) {
    if (opts.json) printJson(ctx, report);
    else for (const line of egressLines(report)) ctx.io.out(line);
    return ExitCodes.ok;
  }
  // Following: what is kept now, then each change, one line (one JSON line) per connection.
  if (opts.json) for (const c of report.connections) ctx.io.out(JSON.stringify(c));
  else for (const line of egressLines(report)) ctx.io.out(line);
  for (;;) {
    await pause(ctx, FOLLOW_INTERVAL_MS);
    if (ctx.interrupt.aborted) break;
    report = await api.sandboxEgress(opts.ref, report.seq);
    for (const c of report.connections) ctx.io.out(opts.json ? JSON.stringify(c) : connectionLine(c));
  }
  return ExitCodes.ok;
}

/** Waits `ms`, or less when interrupted. */
function pause(ctx: Context, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      ctx.interrupt.removeEventListener("abort", stop);
      resolve();
    }, ms);
    ctx.interrupt.addEventListener("abort", stop, { once: true });
  });
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
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals();
  const ref = await wholeSandboxRef(ctx, checkSandboxRef(c.args[0]!));
  return run({ ref, json: o.json === true, follow: o.follow === true }, ctx);
};
