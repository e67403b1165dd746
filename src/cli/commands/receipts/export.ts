// sbx receipts export: JSON Lines, one detailed receipt per line.

import type { Command } from "commander";
import { detailedReceiptDocument } from "../../../receipts/document.js";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { parseTimeArg } from "../../duration.js";
import { UsageError } from "../../errors.js";

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
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("export")
    .summary("print receipts as JSON Lines, oldest first")
    .description("Print every receipt (with attempts and observations) as one JSON document per line, oldest first.")
    .option("--since <time>", "only receipts created at or after TIME (ISO-8601, or a duration ago like 7d)")
    .action(bind(async (ctx, c) => run(parseExportOptions(c.opts()), ctx)));
  withExamples(cmd, [
    { command: "sbx receipts export --since 7d > receipts.jsonl", description: "last week's receipts" },
  ]);
}
