// sbx receipts refresh: one observation of the execution behind a receipt.

import type { Command } from "commander";
import { receiptDocument } from "../../../receipts/document.js";
import { type Bind, declareCompletion, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { endpointOfReceipt } from "../../dispatch.js";
import { observeOnce } from "../../observe.js";
import { printJson } from "../../render/outcome.js";
import { colorClassification } from "../../render/receipt.js";

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
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("refresh")
    .summary("observe the execution behind a receipt once")
    .description(
      "Read the execution once (by execution id, or by idempotency key when no id was received)\n" +
        "and record what was learned. A failed read is recorded but never erases an earlier answer.\n" +
        "Never sends the request again.",
    )
    .argument("<id>", "receipt id, execution id, idempotency key, or a unique prefix")
    .option("--json", "print the receipt document")
    .action(bind(async (ctx, c) => run({ ref: c.args[0]!, json: c.optsWithGlobals().json === true }, ctx)));
  declareCompletion(cmd, "<id>", "receipt-id");
  withExamples(cmd, [{ command: "sbx receipts refresh rcp_0mhx", description: "one read, recorded" }]);
}
