// sbx receipts wait: observe until the execution is settled. Never POSTs.

import type { Command } from "commander";
import { receiptDocument } from "../../../receipts/document.js";
import { type Bind, declareCompletion, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { endpointOfReceipt } from "../../dispatch.js";
import { durationOption } from "../../duration.js";
import { ExitCodes } from "../../errors.js";
import { printExactOutput } from "../../exact-output.js";
import { type WaitEnd, waitUntilSettled } from "../../observe.js";
import { printDispatchOutcome } from "../../render/outcome.js";

export interface WaitOptions {
  ref: string;
  timeoutMs: number;
  json: boolean;
}

export function parseWaitOptions(ref: string, raw: { timeout?: string; json?: boolean }): WaitOptions {
  const timeoutMs = raw.timeout === undefined ? 15 * 60_000 : durationOption("--timeout", raw.timeout);
  return { ref, timeoutMs, json: raw.json === true };
}

export async function run(opts: WaitOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const id = store.resolve(opts.ref);
  const stored = store.get(id);
  const api = await ctx.api(endpointOfReceipt(ctx, stored));
  const progress = ctx.io.progress(`waiting for ${id}…`, { elapsed: true });
  let end: WaitEnd;
  try {
    end = await waitUntilSettled(ctx, api, id, opts.timeoutMs, (c) =>
      progress.update(`waiting for ${id} (${c.classification ?? "no answer"})…`),
    );
  } finally {
    progress.stop();
  }
  const doc = receiptDocument(store.get(id));
  if (end === "unknown_to_backend") {
    ctx.io.err(`sbx: the backend does not know the execution of ${id} (it may never have arrived, or it was purged)`);
  } else if (end === "deadline") {
    ctx.io.err(`sbx: stopped waiting after ${opts.timeoutMs / 1000}s; ${id} is still ${doc.classification}`);
  }
  if (!opts.json) await printExactOutput(ctx, api, doc);
  const code = printDispatchOutcome(ctx, doc, opts.json, { outputShown: !opts.json });
  return end === "interrupted" ? ExitCodes.cancelled : code;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("wait")
    .summary("observe a receipt's execution until it is settled")
    .description(
      "Observe the original execution until it is terminal: by execution id with server-side waits\n" +
        "(at most 50 s each, repeated), or by idempotency key when no id was ever received. Prints the\n" +
        "output like exec and exits with the same code. Never sends the request again.",
    )
    .argument("<id>", "receipt id, execution id, idempotency key, or a unique prefix")
    .option("--timeout <dur>", "give up waiting after this long (default: 15m)")
    .option("--json", "print the receipt document")
    .action(bind(async (ctx, c) => run(parseWaitOptions(c.args[0]!, c.optsWithGlobals()), ctx)));
  declareCompletion(cmd, "<id>", "receipt-id");
  withExamples(cmd, [
    { command: "sbx receipts wait rcp_0mhx", description: "until settled, then exit like exec" },
    { command: "sbx receipts wait rcp_0mhx --timeout 30s --json", description: "bounded, for scripts" },
  ]);
}
