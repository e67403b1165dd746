// sbx receipts export: JSON Lines, one detailed receipt per line.

import { detailedReceiptDocument } from "../../../receipts/document.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { parseTimeArg } from "../../duration.js";
import { UsageError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface ExportOptions {
  since: string | undefined;
}

export function parseExportOptions(raw: { since?: string }): ExportOptions {
  if (raw.since === undefined) return { since: undefined };
  const since = parseTimeArg(raw.since);
  if (since === null)
    throw new UsageError(`--since ${JSON.stringify(raw.since)}: use an ISO-8601 time or a duration like 7d`);
  return { since };
}

export async function run(opts: ExportOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const all = store.list(opts.since === undefined ? {} : { since: opts.since }).reverse();
  for (const r of all) ctx.io.out(JSON.stringify(detailedReceiptDocument(r)));
  return ExitCodes.ok;
}

/** Bound to `sbx receipts export` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseExportOptions(c.opts()), ctx);
