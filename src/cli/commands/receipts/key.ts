// sbx receipts key: the public half of the key that signs this store's bundles (made
// on first use, like the bundle's own first export would make it).

import { ExitCodes } from "../../../common/exit-codes.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";

export interface KeyOptions {
  pem: boolean;
  json: boolean;
}

export async function run(opts: KeyOptions, ctx: Context): Promise<number> {
  const { fingerprint, loadOrCreateSigningKey, publicKeyPem, publicKeyText } = await import(
    "../../../receipts/signing-key.js"
  );
  // The key lives beside the store, in its private directory.
  await ctx.receipts();
  const key = loadOrCreateSigningKey(ctx.paths.receiptsKey);
  const doc = {
    algorithm: "ed25519",
    public_key: publicKeyText(key.publicRaw),
    fingerprint: fingerprint(key.publicRaw),
    file: key.file,
  };
  if (opts.json) printJson(ctx, { ...doc, pem: publicKeyPem(key.publicRaw) });
  else if (opts.pem) ctx.io.writeOut(publicKeyPem(key.publicRaw));
  else {
    ctx.io.out(doc.public_key);
    ctx.io.info(`sbx: ${doc.fingerprint}, the private half in ${doc.file}`);
  }
  return ExitCodes.ok;
}

/** Bound to `sbx receipts key` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals();
  return run({ pem: o.pem === true, json: o.json === true }, ctx);
};
