// sbx image rm REF

import { NotFoundError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { canonicalRef, isDigest } from "../../../backend/images/index.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { imageRefArg, localImageStore } from "./local-store.js";

export async function run(opts: { ref: string; json: boolean }, ctx: Context): Promise<number> {
  const store = localImageStore(ctx);
  let canonical: string | null = null;
  if (!isDigest(opts.ref) && !/^[0-9a-f]{6,64}$/.test(opts.ref)) canonical = canonicalRef(imageRefArg(opts.ref));
  const image = store.findImage(opts.ref, canonical);
  if (image === null) {
    throw new NotFoundError(`no image ${JSON.stringify(opts.ref)} in the store`, "sbx image list shows what there is");
  }
  const blobs = store.removeImage(image.digest);
  if (opts.json) printJson(ctx, { removed: image.digest, blobs_removed: blobs });
  else ctx.io.info(`sbx: removed image ${image.digest} (${blobs} blob${blobs === 1 ? "" : "s"} no other image uses)`);
  return ExitCodes.ok;
}

/** Bound to `sbx image rm` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ ref: c.args[0]!, json: c.optsWithGlobals().json === true }, ctx);
