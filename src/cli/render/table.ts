// Rows for people and for pipes: aligned columns on a terminal (cli-table3, no box,
// fitted to its width: ids shortened to their short form first, then the column that
// may give way cut), tab-separated rows (no ANSI, ISO-8601 times, ids whole) everywhere else.

import { shortId } from "../../common/ids.js";
import type { IO } from "../io/io.js";

export interface TableOptions {
  /** The column (by its header) shortened with "…" when the table is wider than the terminal. */
  shrink?: string;
}

/** No box: columns apart by two spaces, as `docker ps` and `kubectl get` print them. */
const NO_BORDERS = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "  ",
};
const GAP = NO_BORDERS.middle.length;
/** A shortened column keeps at least this much. */
const SHRINK_MIN = 10;

/** With --quiet only the rows are printed (no header line): data and nothing else. */
export async function printTable(io: IO, head: string[], rows: string[][], opts: TableOptions = {}): Promise<void> {
  if (!io.stdoutIsTTY || io.quiet) {
    if (!io.quiet) io.out(head.join("\t"));
    for (const r of rows) io.out(r.map((c) => c.replace(/[\t\n]/g, " ")).join("\t"));
    return;
  }
  // Loaded for a terminal only (imported, so the release binary's bundle carries them).
  const { default: Table } = await import("cli-table3");
  // Columns as a terminal draws them (colour codes take none, wide characters two), as cli-table3 lays them out.
  const { default: width } = await import("string-width");
  // A cell is one line: a newline in a command or a note would start what looks like a row.
  let cells = rows.map((r) => r.map((c) => c.replace(/[\t\n\r]/g, " ")));
  const measure = () => {
    const widths = head.map((h, i) => Math.max(width(h), ...cells.map((r) => width(r[i] ?? ""))));
    return { widths, total: widths.reduce((a, b) => a + b, 0) + GAP * (head.length - 1) };
  };
  let { widths, total } = measure();
  // Wider than the terminal: ids give way to their short form first (still accepted
  // everywhere, src/common/ids.ts), before any column is cut.
  if (io.stdoutColumns !== null && total > io.stdoutColumns) {
    cells = cells.map((r) => r.map(shortId));
    ({ widths, total } = measure());
  }
  // Wider than the terminal: the column that may give way does (ids and times never do).
  const colWidths: Array<number | null> = head.map(() => null);
  const k = opts.shrink === undefined ? -1 : head.indexOf(opts.shrink);
  if (k >= 0 && io.stdoutColumns !== null && total > io.stdoutColumns) {
    colWidths[k] = Math.max(SHRINK_MIN, widths[k]! - (total - io.stdoutColumns));
  }
  const table = new Table({
    head: head.map((h) => io.chalk.bold(h)),
    chars: NO_BORDERS,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
    wordWrap: false,
    colWidths,
  });
  for (const r of cells) table.push(r);
  io.out(
    table
      .toString()
      .split("\n")
      .map((line) => line.trimEnd())
      .join("\n"),
  );
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
