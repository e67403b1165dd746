// sbx receipts verify [ID…] | --bundle FILE [--key PUB]: recompute the receipt chain
// (of the store, or of a signed bundle made elsewhere) and name what breaks.

import fs from "node:fs";
import { UsageError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { ReceiptNotFound } from "../../../receipts/errors.js";
import type { VerifyReport } from "../../../receipts/verify.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import {
  printBundleVerification,
  printProblem,
  printVerifyReport,
  verifyReportJson,
} from "../../render/verify-report.js";
import { counted } from "../../render/words.js";
import { requireExistingStore } from "./existing-store.js";

export interface VerifyOptions {
  refs: string[];
  bundle: string | null;
  key: string | null;
  json: boolean;
}

export function parseVerifyOptions(
  args: string[],
  raw: { bundle?: string; key?: string; json?: boolean },
): VerifyOptions {
  if (raw.bundle !== undefined && args.length > 0) {
    throw new UsageError("give receipt ids or --bundle FILE, not both", "a bundle is verified whole");
  }
  if (raw.key !== undefined && raw.bundle === undefined) {
    throw new UsageError("--key checks a bundle's signer: use it with --bundle FILE");
  }
  return { refs: args, bundle: raw.bundle ?? null, key: raw.key ?? null, json: raw.json === true };
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

async function verifyBundleFile(opts: VerifyOptions & { bundle: string }, ctx: Context): Promise<number> {
  const { parsePublicKey } = await import("../../../receipts/signing-key.js");
  const { verifyBundle } = await import("../../../receipts/bundle.js");
  const expected = opts.key === null ? null : parsePublicKey(opts.key);
  let bytes: Buffer;
  try {
    bytes = opts.bundle === "-" ? await ctx.io.readStdin() : fs.readFileSync(opts.bundle);
  } catch (err) {
    throw new UsageError(
      `cannot read ${opts.bundle}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const result = verifyBundle(bytes, expected);
  if (opts.json) {
    const { report, ...rest } = result;
    printJson(ctx, { file: opts.bundle, ...rest, chain: report && verifyReportJson(report, {}, null) });
  } else printBundleVerification(ctx.io, opts.bundle, result);
  if (result.intact && expected === null) {
    ctx.io.info(
      "sbx: checked against the key the bundle names; to know who signed it, pass --key (what `sbx receipts key` prints where it was made)",
    );
  }
  return result.intact ? ExitCodes.ok : ExitCodes.notIntact;
}

export async function run(opts: VerifyOptions, ctx: Context): Promise<number> {
  if (opts.bundle !== null) return verifyBundleFile({ ...opts, bundle: opts.bundle }, ctx);
  requireExistingStore(ctx, "nothing to verify (a bundle is verified with --bundle FILE)");
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
