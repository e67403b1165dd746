// sbx receipts show

import { detailedReceiptDocument } from "../../../receipts/document.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printReceiptDetail } from "../../render/receipt.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface ShowOptions {
  ref: string;
  json: boolean;
}

export async function run(opts: ShowOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const doc = detailedReceiptDocument(store.get(store.resolve(opts.ref)));
  if (opts.json) printJson(ctx, doc);
  else printReceiptDetail(ctx.io, doc);
  return ExitCodes.ok;
}

/** Bound to `sbx receipts show` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ ref: c.args[0]!, json: c.optsWithGlobals().json === true }, ctx);
