// sbx receipts export: JSON Lines, one detailed receipt per line; or, with --bundle,
// one signed file that verifies elsewhere (docs/receipt-bundle.md).

import fs from "node:fs";
import path from "node:path";
import { UsageError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { detailedReceiptDocument } from "../../../receipts/document.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { parseTimeArg } from "../../duration.js";
import { printJson } from "../../render/outcome.js";
import { counted } from "../../render/words.js";
import { requireExistingStore } from "./existing-store.js";

export interface ExportOptions {
  since: string | undefined;
  /** A file to write a signed bundle to ("-": stdout). */
  bundle: string | undefined;
  json: boolean;
}

export function parseExportOptions(raw: { since?: string; bundle?: string; json?: boolean }): ExportOptions {
  const bundle = raw.bundle;
  if (bundle === "") throw new UsageError("--bundle needs a file name (or - for stdout)");
  if (raw.json === true && bundle === undefined) {
    throw new UsageError("--json describes a --bundle; without it, export prints JSON Lines already");
  }
  if (raw.since === undefined) return { since: undefined, bundle, json: raw.json === true };
  const since = parseTimeArg(raw.since);
  if (since === null)
    throw new UsageError(`--since ${JSON.stringify(raw.since)}: use an ISO-8601 time or a duration like 7d`);
  return { since, bundle, json: raw.json === true };
}

/** Writes the whole file or nothing: a private temporary file beside it, renamed into place. */
function writeWhole(file: string, bytes: Buffer): void {
  const tmp = path.join(path.dirname(path.resolve(file)), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    const fd = fs.openSync(tmp, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600);
    try {
      fs.writeSync(fd, bytes);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw new UsageError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

async function exportBundle(opts: ExportOptions & { bundle: string }, ctx: Context): Promise<number> {
  requireExistingStore(ctx, "nothing to put in a bundle");
  const store = await ctx.receipts();
  const [{ signBundle }, { fingerprint, loadOrCreateSigningKey }] = await Promise.all([
    import("../../../receipts/bundle.js"),
    import("../../../receipts/signing-key.js"),
  ]);
  const key = loadOrCreateSigningKey(ctx.paths.receiptsKey);
  const { text, meta } = await store.bundlePayload(opts.since ?? null);
  const bytes = signBundle(text, key);
  if (opts.bundle === "-") await ctx.io.writeOutPaced(bytes);
  else writeWhole(opts.bundle, bytes);
  const summary = {
    file: opts.bundle,
    since: meta.since,
    receipts: meta.receipts,
    entries: meta.entries,
    head: meta.head,
    key: key.publicRaw.toString("base64"),
    fingerprint: fingerprint(key.publicRaw),
    bytes: bytes.length,
  };
  if (opts.json && opts.bundle !== "-") printJson(ctx, summary);
  else {
    ctx.io.info(
      `sbx: wrote ${opts.bundle === "-" ? "the bundle" : opts.bundle}: ${counted(meta.receipts, "receipt")}, ${counted(
        meta.entries,
        "chain entry",
        "chain entries",
      )}, signed by ${summary.fingerprint}; check it anywhere with sbx receipts verify --bundle FILE --key ${summary.key}`,
    );
  }
  return ExitCodes.ok;
}

export async function run(opts: ExportOptions, ctx: Context): Promise<number> {
  if (opts.bundle !== undefined) return exportBundle({ ...opts, bundle: opts.bundle }, ctx);
  const store = await ctx.receipts();
  const all = store.list(opts.since === undefined ? {} : { since: opts.since }).reverse();
  for (const r of all) ctx.io.out(JSON.stringify(detailedReceiptDocument(r)));
  return ExitCodes.ok;
}

/** Bound to `sbx receipts export` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseExportOptions(c.optsWithGlobals()), ctx);
