// Receipts against time (sbx receipts timeline): one row per receipt, a bar from its
// dispatch to its settlement, a symbol and a colour by classification, those still in
// doubt left open and marked. Fitted to the terminal; plain ASCII without colour in a
// pipe. The same items feed the HTML page (timeline-html.ts). Widths are columns as a
// terminal draws them (a wide character in a command takes two), and no glyph is one
// that terminals may draw as a two-column emoji (▶ is, ► is not).

import type { ChalkInstance } from "chalk";
import stringWidth from "string-width";
import { IN_DOUBT } from "../../receipts/classifications.js";
import type { Classification } from "../../receipts/classifications.js";
import { type DetailedReceiptDocument, explain } from "../../receipts/document.js";
import { commandText } from "./receipt.js";

/** A receipt placed in time. */
export interface TimelineItem {
  doc: DetailedReceiptDocument;
  command: string;
  /** Dispatch of the first attempt (ms since the epoch). */
  start: number;
  /** Settlement: the answer that decided it; null while it is running or in doubt. */
  end: number | null;
  in_doubt: boolean;
  /** What is known and what to do next, as sbx says it on stderr (null when settled plainly). */
  explanation: string;
}

/** Classifications whose answer ends the story: the bar stops at that answer. */
const SETTLED = new Set<Classification>(["succeeded", "failed", "timed_out", "cancelled", "rejected", "not_started"]);

export function timelineItem(doc: DetailedReceiptDocument): TimelineItem {
  const start = Date.parse(doc.attempts[0]?.dispatched_at ?? doc.created_at);
  const answered = doc.answered_at === null ? null : Date.parse(doc.answered_at);
  return {
    doc,
    command: commandText(doc),
    start,
    end: SETTLED.has(doc.classification) ? Math.max(start, answered ?? start) : null,
    in_doubt: IN_DOUBT.includes(doc.classification),
    explanation: explain(doc),
  };
}

/** One symbol per classification: a Unicode one for terminals, an ASCII one for pipes. */
export const SYMBOLS: Record<Classification, [string, string]> = {
  succeeded: ["✓", "+"],
  admitted: ["✓", "a"],
  failed: ["✗", "x"],
  timed_out: ["⧖", "T"],
  cancelled: ["⊘", "c"],
  rejected: ["⊝", "r"],
  not_started: ["∅", "-"],
  running: ["►", ">"],
  dispatched: ["?", "?"],
  outcome_unknown: ["?", "?"],
  local_timeout: ["?", "?"],
  result_unconfirmed: ["?", "?"],
  in_progress: ["?", "?"],
  record_pending: ["?", "?"],
};

export function colorOf(chalk: ChalkInstance, c: Classification): (s: string) => string {
  if (c === "succeeded" || c === "admitted") return chalk.green;
  if (c === "failed" || c === "timed_out") return chalk.red;
  if (c === "cancelled" || c === "rejected" || c === "not_started") return chalk.gray;
  if (c === "running") return chalk.cyan;
  return chalk.yellow;
}

const utc = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

export function spanText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** `text` in exactly `width` columns: padded, or cut with "…" (never in the middle of a wide character). */
function padTo(text: string, width: number): string {
  const columns = stringWidth(text);
  if (columns <= width) return text + " ".repeat(width - columns);
  let out = "";
  let used = 0;
  for (const ch of text) {
    const w = stringWidth(ch);
    if (used + w > width - 1) break;
    out += ch;
    used += w;
  }
  return `${out}…${" ".repeat(Math.max(0, width - 1 - used))}`;
}

export interface TimelineStyle {
  /** Columns to fill. */
  width: number;
  /** Unicode symbols and block bars (a terminal), or ASCII (a pipe). */
  unicode: boolean;
  /** Colours, or null for none. */
  chalk: ChalkInstance | null;
  now: number;
}

/** The lines of the terminal timeline, oldest receipt first; each at most `width` columns. */
export function renderTimeline(items: readonly TimelineItem[], style: TimelineStyle): string[] {
  const { width, unicode, now } = style;
  const paint = (c: Classification, s: string) => (style.chalk ? colorOf(style.chalk, c)(s) : s);
  const sorted = [...items].sort((a, b) => a.start - b.start);
  const t0 = Math.min(...sorted.map((i) => i.start));
  const t1 = Math.max(t0 + 1, ...sorted.map((i) => i.end ?? Math.max(now, i.start)));
  const doubt = sorted.filter((i) => i.in_doubt).length;
  const lines = [
    padTo(
      `${sorted.length} receipt${sorted.length === 1 ? "" : "s"}, ${utc(t0)} to ${clock(t1)}Z (${spanText(t1 - t0)})${
        doubt ? `, ${doubt} in doubt` : ""
      }`,
      width,
    ).trimEnd(),
  ];
  // Labels: symbol, receipt id, command; the rest is the bar area.
  const idWidth = 14;
  const labelWidth = Math.max(2 + idWidth + 1 + 8, Math.min(2 + idWidth + 1 + 24, Math.floor(width * 0.45)));
  const area = Math.max(10, width - labelWidth - 2);
  const col = (t: number) => Math.min(area - 1, Math.floor(((t - t0) / (t1 - t0)) * area));
  const left = clock(t0);
  const right = clock(t1);
  const labels =
    area >= left.length + right.length + 1
      ? `${left}${" ".repeat(area - left.length - right.length)}${right}`
      : left.slice(0, area);
  lines.push(`${" ".repeat(labelWidth)} ${labels}`);
  lines.push(`${" ".repeat(labelWidth)} ${unicode ? `├${"─".repeat(area - 2)}┤` : `|${"-".repeat(area - 2)}|`}`);
  for (const item of sorted) {
    const c = item.doc.classification;
    const [uni, ascii] = SYMBOLS[c];
    const label = `${paint(c, unicode ? uni : ascii)} ${padTo(item.doc.receipt_id, idWidth)} ${padTo(item.command, labelWidth - idWidth - 3)}`;
    const a = col(item.start);
    let bar: string;
    if (item.end !== null) {
      const b = Math.max(a + 1, Math.min(area, Math.ceil(((item.end - t0) / (t1 - t0)) * area)));
      bar = (unicode ? "█" : "=").repeat(b - a);
    } else {
      // Still running or in doubt: open to now, its end marked.
      const b = Math.max(a + 1, area);
      const mark = item.in_doubt ? "?" : unicode ? "►" : ">";
      bar = `${(unicode ? "▒" : "~").repeat(b - a - 1)}${mark}`;
    }
    lines.push(`${label} ${" ".repeat(a)}${paint(c, bar)}${" ".repeat(area - a - [...bar].length)}`.trimEnd());
  }
  const legend = (Object.keys(SYMBOLS) as Classification[])
    .filter((c) => sorted.some((i) => i.doc.classification === c))
    .map((c) => `${paint(c, unicode ? SYMBOLS[c][0] : SYMBOLS[c][1])} ${c}`);
  if (legend.length) lines.push("", ...wrapWords(legend, width));
  return lines;
}

/** Legend entries joined by two spaces, wrapped at the width (in columns; colour takes none). */
function wrapWords(words: string[], width: number): string[] {
  const out: string[] = [];
  let line = "";
  let len = 0;
  for (const w of words) {
    const wl = stringWidth(w);
    if (len > 0 && len + 2 + wl > width) {
      out.push(line);
      line = "";
      len = 0;
    }
    line += `${len ? "  " : ""}${w}`;
    len += (len ? 2 : 0) + wl;
  }
  if (line) out.push(line);
  return out;
}
