// sbx sandbox stats [NAME…] [-f] [--json] (docs/operations.md, "Sandbox stats"): one
// sample of each sandbox's figures, CPU % from two samples a second apart. On a
// terminal -f redraws the table in place (cursor home, each line cleared to its end,
// what is below the table cleared: no flicker, no scrolling) and leaves it on screen
// once interrupted; off a terminal, or with --json, each sample is appended.

import type { SandboxStats } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { formatBytes } from "../../render/bytes.js";
import { checkSandboxRef } from "../../command-flags.js";

const INTERVAL_MS = 1000;

export interface StatsRow extends SandboxStats {
  /** CPU % of one core over the time between two samples; null: unknown (with why in unavailable.cpu). */
  cpu_percent: number | null;
}

/** CPU % between two samples of one sandbox (pure). */
export function cpuPercent(before: SandboxStats | undefined, now: SandboxStats): number | null {
  if (before === undefined || before.cpu_usage_us === null || now.cpu_usage_us === null) return null;
  const wallUs = (Date.parse(now.sampled_at) - Date.parse(before.sampled_at)) * 1000;
  if (wallUs <= 0 || now.cpu_usage_us < before.cpu_usage_us) return null;
  return Math.round(((now.cpu_usage_us - before.cpu_usage_us) / wallUs) * 1000) / 10;
}

function of(n: number | null, limit: number | null, fmt: (n: number) => string): string {
  if (n === null) return "-";
  return limit === null ? fmt(n) : `${fmt(n)} / ${fmt(limit)}`;
}

/** The table's lines (pure). */
export function statsLines(rows: StatsRow[]): string[] {
  const head = ["NAME", "STATE", "CPU %", "MEM / LIMIT", "PEAK", "PIDS / LIMIT", "/TMP", "WORKSPACE", "NET IN / OUT"];
  const body = rows.map((r) => [
    r.name,
    r.state,
    r.cpu_percent === null ? "-" : `${r.cpu_percent.toFixed(1)}%`,
    of(r.memory_bytes, r.memory_limit_bytes, formatBytes),
    r.memory_peak_bytes === null ? "-" : formatBytes(r.memory_peak_bytes),
    of(r.pids, r.pids_limit, String),
    of(r.tmp_bytes, r.tmp_limit_bytes, formatBytes),
    r.workspace_bytes === null ? "-" : formatBytes(r.workspace_bytes),
    r.net_rx_bytes === null || r.net_tx_bytes === null
      ? "-"
      : `${formatBytes(r.net_rx_bytes)} / ${formatBytes(r.net_tx_bytes)}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const notes = rows.flatMap((r) =>
    Object.entries(r.unavailable)
      .filter(([k]) => r.state === "running" || !["tmp", "network"].includes(k))
      .map(([k, why]) => `${r.name}: ${k}: ${why}`),
  );
  return [line(head), ...body.map(line), ...(notes.length === 0 ? [] : ["", ...notes])];
}

export async function run(opts: { refs: string[]; follow: boolean; json: boolean }, ctx: Context): Promise<number> {
  const api = await ctx.api();
  const refs = opts.refs.length > 0 ? opts.refs : (await api.listSandboxes()).map((s) => s.name);
  const sample = () => Promise.all(refs.map((r) => api.sandboxStats(r)));
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const stop = () => {
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        ctx.interrupt.removeEventListener("abort", stop);
        resolve();
      }, ms);
      ctx.interrupt.addEventListener("abort", stop, { once: true });
    });
  let before = new Map((await sample()).map((s) => [s.sandbox_id, s]));
  const inPlace = opts.follow && !opts.json && ctx.io.stdoutIsTTY;
  for (;;) {
    await wait(INTERVAL_MS);
    if (ctx.interrupt.aborted) break;
    const now = await sample();
    const rows: StatsRow[] = now.map((s) => ({ ...s, cpu_percent: cpuPercent(before.get(s.sandbox_id), s) }));
    before = new Map(now.map((s) => [s.sandbox_id, s]));
    if (opts.json && opts.follow) for (const r of rows) ctx.io.out(JSON.stringify(r));
    else if (opts.json) ctx.io.out(JSON.stringify({ sandboxes: rows }, null, 2));
    else if (inPlace) {
      // Home, each line over the last (cleared to its end), then what is left below cleared.
      const lines = statsLines(rows);
      ctx.io.writeOut(`\x1b[H${lines.map((l) => `${l}\x1b[K`).join("\n")}\n\x1b[J`);
    } else {
      for (const l of statsLines(rows)) ctx.io.out(l);
      if (opts.follow) ctx.io.out("");
    }
    if (!opts.follow) break;
  }
  return ExitCodes.ok;
}

/** Bound to `sbx sandbox stats` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals();
  const refs = (c.args as string[]).map((r) => checkSandboxRef(r));
  if (o.follow === true && ctx.io.stdoutIsTTY && o.json !== true) ctx.io.writeOut("\x1b[2J");
  return run({ refs, follow: o.follow === true, json: o.json === true }, ctx);
};
