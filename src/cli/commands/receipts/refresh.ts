// sbx receipts refresh: one observation of the execution behind a receipt.

import { receiptDocument } from "../../../receipts/document.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { endpointOfReceipt } from "../../dispatch.js";
import { observeOnce } from "../../observe.js";
import { printJson } from "../../render/outcome.js";
import { colorClassification } from "../../render/receipt.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface RefreshOptions {
  ref: string;
  json: boolean;
}

export async function run(opts: RefreshOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const id = store.resolve(opts.ref);
  const stored = store.get(id);
  const api = await ctx.api(endpointOfReceipt(ctx, stored));
  const c = await observeOnce(ctx, api, stored, "refresh", 0);
  const doc = receiptDocument(store.get(id));
  if (opts.json) {
    printJson(ctx, doc);
  } else {
    const learned = c.classification === null ? `nothing new (${c.error?.code ?? "no answer"})` : c.classification;
    ctx.io.out(`${doc.receipt_id}\t${colorClassification(ctx.io.chalk, doc.classification)}`);
    ctx.io.info(`sbx: observed: ${learned}${doc.next ? `; next: ${doc.next}` : ""}`);
  }
  return ExitCodes.ok;
}

/** Bound to `sbx receipts refresh` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ ref: c.args[0]!, json: c.optsWithGlobals().json === true }, ctx);
