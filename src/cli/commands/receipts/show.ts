// sbx receipts show

import type { Command } from "commander";
import { detailedReceiptDocument } from "../../../receipts/document.js";
import { type Bind, declareCompletion, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printReceiptDetail } from "../../render/receipt.js";

export interface ShowOptions {
  ref: string;
  json: boolean;
}

export async function run(opts: ShowOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const doc = detailedReceiptDocument(store.get(store.resolve(opts.ref)));
  if (opts.json) printJson(ctx, doc);
  else printReceiptDetail(ctx.io, doc);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("show")
    .summary("show one receipt with its attempts and observations")
    .description(
      "Show a receipt: what was sent (key, body sha256), every attempt, every observation in order,\n" +
        "the current classification and, when it is in doubt, the exact next step.",
    )
    .argument("<id>", "receipt id, execution id, idempotency key, or a unique prefix")
    .option("--json", "print the receipt document with attempts and observations")
    .action(bind(async (ctx, c) => run({ ref: c.args[0]!, json: c.optsWithGlobals().json === true }, ctx)));
  declareCompletion(cmd, "<id>", "receipt-id");
  withExamples(cmd, [
    { command: "sbx receipts show rcp_0mhx", description: "by a prefix of the receipt id" },
    { command: "sbx receipts show exe_12ab --json", description: "by execution id, as JSON" },
  ]);
}
