// How the result of a dispatch or a wait is shown: the command's output on sbx's
// stdout/stderr, then (on stderr) a line for anything not confirmed. With --json,
// the receipt document and nothing else on stdout.

import { RECORD_OUTPUT_LIMIT } from "../../protocol/types.js";
import { IN_DOUBT } from "../../receipts/classifications.js";
import { explain, type ReceiptDocument } from "../../receipts/document.js";
import type { Context } from "../context.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { SbxError } from "../../common/errors.js";
import { redactForDisplay } from "../secrets.js";

export function printJson(ctx: Context, doc: unknown): void {
  ctx.io.out(JSON.stringify(doc, null, 2));
}

function humanBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB` : `${n} bytes`;
}

/** Prints a receipt's result; returns the exit code it gives. */
export function printDispatchOutcome(
  ctx: Context,
  doc: ReceiptDocument,
  json: boolean,
  opts: { outputShown?: boolean; jsonExtra?: Record<string, unknown> } = {},
): number {
  const exit = doc.exit ?? ExitCodes.inDoubt;
  if (json) {
    printJson(ctx, opts.jsonExtra === undefined ? doc : { ...doc, ...opts.jsonExtra });
    // The one line for anything not confirmed goes to stderr even with --json (and --quiet).
    if (doc.classification !== "succeeded" && doc.classification !== "failed") ctx.io.err(explain(doc));
    return exit;
  }
  // The record's text, unless the caller showed the output itself (live, or byte for byte).
  if (!opts.outputShown) {
    if (doc.stdout) ctx.io.writeOut(doc.stdout);
    if (doc.stderr) ctx.io.writeErr(doc.stderr);
  }
  for (const s of ["stdout", "stderr"] as const) {
    if (doc[`${s}_truncated`]) {
      ctx.io.err(`sbx: the receipt ${doc.receipt_id} keeps only the last ${humanBytes(RECORD_OUTPUT_LIMIT)} of ${s}`);
    }
  }
  if (doc.end_reason === "out_of_memory") {
    // Not a bare signal 9: the sandbox's memory limit ended it, and how to give it more.
    const s = doc.sandbox_id;
    ctx.io.err(
      `sbx: ${doc.execution_id ?? doc.receipt_id} was killed: out of memory (the memory limit of sandbox ${s}: sbx sandbox show ${s}; raise it with sbx sandbox update ${s} --memory SIZE)`,
    );
  }
  const settled = doc.classification === "succeeded" || doc.classification === "failed";
  if (!settled) {
    const line = explain(doc);
    if (IN_DOUBT.includes(doc.classification) || doc.classification === "not_started")
      ctx.io.err(ctx.io.errChalk.yellow(line));
    else ctx.io.err(line);
  }
  return exit;
}

/**
 * After sending, the store could not take the answer: it was shown, and now goes to
 * stderr as JSON so that nothing received is lost; the exit says "in doubt" (255).
 */
export function answerNotRecorded(ctx: Context, err: Error, doc: ReceiptDocument, json: boolean): SbxError {
  if (!json) ctx.io.err(redactForDisplay(ctx, JSON.stringify(doc)));
  return new SbxError(
    "answer_not_recorded",
    `the answer to ${doc.receipt_id} could not be recorded (${err.message}); it is ${json ? "on stdout" : "above, as JSON"}`,
    {
      exitCode: ExitCodes.inDoubt,
      hint: `once the receipt store works again, \`sbx receipts wait ${doc.receipt_id}\` reads it from the backend`,
    },
  );
}
