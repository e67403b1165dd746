// sbx receipts timeline [--since 2h] [--html FILE]: receipts against time, on the
// terminal (fitted to its width; plain ASCII in a pipe) or as one HTML page.

import fs from "node:fs";
import path from "node:path";
import { UsageError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { detailedReceiptDocument } from "../../../receipts/document.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { parseTimeArg } from "../../duration.js";
import { renderTimeline, timelineItem } from "../../render/timeline.js";

export interface TimelineOptions {
  since: string;
  limit: number;
  html: string | undefined;
}

const DEFAULT_SINCE = "24h";
const DEFAULT_LIMIT = 200;

export function parseTimelineOptions(raw: { since?: string; limit?: number; html?: string }): TimelineOptions {
  const since = parseTimeArg(raw.since ?? DEFAULT_SINCE);
  if (since === null) {
    throw new UsageError(`--since ${JSON.stringify(raw.since)}: use an ISO-8601 time or a duration ago like 2h`);
  }
  if (raw.html === "") throw new UsageError("--html needs a file name");
  return { since, limit: raw.limit ?? DEFAULT_LIMIT, html: raw.html };
}

export async function run(opts: TimelineOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const now = Date.now();
  // The newest `limit` receipts of the window, drawn oldest first.
  const docs = store.list({ since: opts.since, limit: opts.limit }).map(detailedReceiptDocument);
  const items = docs.map(timelineItem);
  if (items.length === 0) {
    ctx.io.info(`sbx: no receipts created since ${opts.since} (--since widens the window)`);
    return ExitCodes.ok;
  }
  if (opts.html !== undefined) {
    const { timelineHtml } = await import("../../render/timeline-html.js");
    const page = timelineHtml(items, now, `sbx receipts since ${opts.since}`);
    const file = path.resolve(opts.html);
    try {
      fs.writeFileSync(`${file}.tmp`, page, { mode: 0o600 });
      fs.renameSync(`${file}.tmp`, file);
    } catch (err) {
      fs.rmSync(`${file}.tmp`, { force: true });
      throw new UsageError(
        `cannot write ${opts.html}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    ctx.io.info(
      `sbx: wrote ${opts.html}: ${items.length} receipt${items.length === 1 ? "" : "s"}; open it in a browser`,
    );
    return ExitCodes.ok;
  }
  const lines = renderTimeline(items, {
    width: ctx.io.stdoutColumns ?? 80,
    unicode: ctx.io.stdoutIsTTY,
    chalk: ctx.io.color ? ctx.io.chalk : null,
    now,
  });
  for (const line of lines) ctx.io.out(line);
  if (items.length === opts.limit) {
    ctx.io.info(`sbx: the newest ${opts.limit} receipts since ${opts.since}; --limit shows more`);
  }
  return ExitCodes.ok;
}

/** Bound to `sbx receipts timeline` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseTimelineOptions(c.opts()), ctx);
