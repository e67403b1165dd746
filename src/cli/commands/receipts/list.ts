// sbx receipts list

import { type Classification, CLASSIFICATIONS } from "../../../receipts/classifications.js";
import { receiptDocument } from "../../../receipts/document.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { UsageError } from "../../../common/errors.js";
import { colorClassification, commandText } from "../../render/receipt.js";
import { cell, formatTime, printTable } from "../../render/table.js";
import { printJson } from "../../render/outcome.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface ListOptions {
  classification: Classification[] | undefined;
  limit: number;
  json: boolean;
}

export function parseListOptions(raw: { classification?: string; limit?: number; json?: boolean }): ListOptions {
  let classification: Classification[] | undefined;
  if (raw.classification !== undefined) {
    classification = raw.classification.split(",").map((c) => c.trim()) as Classification[];
    const bad = classification.find((c) => !CLASSIFICATIONS.includes(c));
    if (bad !== undefined) {
      throw new UsageError(`unknown classification ${JSON.stringify(bad)}`, `one of: ${CLASSIFICATIONS.join(", ")}`);
    }
  }
  return { classification, limit: raw.limit ?? 20, json: raw.json === true };
}

export async function run(opts: ListOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const docs = store
    .list({ limit: opts.limit, ...(opts.classification ? { classification: opts.classification } : {}) })
    .map(receiptDocument);
  if (opts.json) {
    printJson(ctx, docs);
    return ExitCodes.ok;
  }
  const { io } = ctx;
  if (docs.length === 0 && io.stdoutIsTTY) {
    io.info("no receipts yet: run `sbx exec -- echo hello`");
    return ExitCodes.ok;
  }
  await printTable(
    io,
    ["RECEIPT", "CLASSIFICATION", "EXIT", "SANDBOX", "COMMAND", "CREATED"],
    docs.map((d) => [
      d.receipt_id,
      colorClassification(io.chalk, d.classification),
      d.exit === null ? "-" : String(d.exit),
      d.sandbox_id,
      cell(io, commandText(d)),
      formatTime(io, d.created_at),
    ]),
    { shrink: "COMMAND" },
  );
  return ExitCodes.ok;
}

/** Bound to `sbx receipts list` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseListOptions(c.optsWithGlobals()), ctx);
