// Rows for people and for pipes: a cli-table3 table on a terminal, tab-separated
// rows (no ANSI, ISO-8601 times) everywhere else.

import { createRequire } from "node:module";
import type { IO } from "../io/io.js";

const require = createRequire(import.meta.url);

/** With --quiet only the rows are printed (no header line): data and nothing else. */
export function printTable(io: IO, head: string[], rows: string[][]): void {
  if (!io.stdoutIsTTY || io.quiet) {
    if (!io.quiet) io.out(head.join("\t"));
    for (const r of rows) io.out(r.map((c) => c.replace(/[\t\n]/g, " ")).join("\t"));
    return;
  }
  const Table = require("cli-table3") as typeof import("cli-table3");
  const table = new Table({
    head: head.map((h) => io.chalk.bold(h)),
    style: { head: [], border: io.color ? ["grey"] : [] },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
    wordWrap: false,
  });
  for (const r of rows) table.push(r);
  io.out(table.toString());
}

/** A time for people (relative, on a terminal) or for pipes (ISO-8601). */
export function formatTime(io: IO, iso: string | null, now = Date.now()): string {
  if (iso === null) return "-";
  if (!io.stdoutIsTTY) return iso;
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (s < 0) return iso;
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** Shortens text for a table cell on a terminal; pipes get it whole. */
export function cell(io: IO, text: string, width = 40): string {
  if (!io.stdoutIsTTY || text.length <= width) return text;
  return `${text.slice(0, width - 1)}…`;
}
