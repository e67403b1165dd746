// sbx receipts verify [ID…]: recompute the receipt chain and name what breaks.

import { ExitCodes } from "../../../common/exit-codes.js";
import { ReceiptNotFound } from "../../../receipts/errors.js";
import type { VerifyReport } from "../../../receipts/verify.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printProblem, printVerifyReport, verifyReportJson } from "../../render/verify-report.js";
import { counted } from "../../render/words.js";

export interface VerifyOptions {
  refs: string[];
  json: boolean;
}

export function parseVerifyOptions(args: string[], raw: { json?: boolean }): VerifyOptions {
  return { refs: args, json: raw.json === true };
}

/**
 * The receipt a reference names: found as `receipts show` finds it, or, for a receipt
 * that is gone from the store, by the chain entries that still name it.
 */
function receiptNamed(ref: string, resolve: (ref: string) => string, report: VerifyReport): string {
  try {
    return resolve(ref);
  } catch (err) {
    if (!(err instanceof ReceiptNotFound)) throw err;
    const named = [...new Set(report.problems.flatMap((p) => (p.receipt_id?.startsWith(ref) ? [p.receipt_id] : [])))];
    if (named.length === 1) return named[0]!;
    throw err;
  }
}

export async function run(opts: VerifyOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const whole = await store.verify();
  let report = whole;
  let scope: string[] | null = null;
  if (opts.refs.length > 0) {
    scope = opts.refs.map((ref) => receiptNamed(ref, (r) => store.resolve(r), whole));
    const inScope = new Set(scope);
    const problems = whole.problems.filter((p) => inScope.has(p.receipt_id ?? ""));
    report = { ...whole, receipts: scope.length, problems, intact: problems.length === 0 };
  }
  if (opts.json) printJson(ctx, verifyReportJson(report, { store: store.file }, scope));
  else if (scope === null) printVerifyReport(ctx.io, store.file, report);
  else {
    for (const id of scope) {
      const mine = report.problems.filter((p) => p.receipt_id === id);
      if (mine.length === 0) ctx.io.out(`${id}: ${ctx.io.chalk.green("intact")}`);
      for (const p of mine) printProblem(ctx.io, p);
    }
    const others = whole.problems.length - report.problems.length;
    if (others > 0) {
      ctx.io.info(`sbx: the store has ${counted(others, "other problem")}: sbx receipts verify lists them`);
    }
  }
  return report.intact ? ExitCodes.ok : ExitCodes.notIntact;
}

/** Bound to `sbx receipts verify` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseVerifyOptions(c.args, c.optsWithGlobals()), ctx);
