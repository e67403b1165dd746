// sbx image pull REF

import { SbxError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { pullImage } from "../../../backend/images/index.js";
import { ImagePullError } from "../../../backend/images/index.js";
import type { ImageRecord } from "../../../backend/images/index.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { imageRefArg, localImageStore } from "./local-store.js";
import { imageDocument, platformText, sizeText } from "./render.js";

export async function run(opts: { ref: string; json: boolean }, ctx: Context): Promise<number> {
  const ref = imageRefArg(opts.ref);
  const store = localImageStore(ctx);
  const progress = ctx.io.progress(`pulling ${ref.text}…`);
  let image: ImageRecord;
  try {
    image = await pullImage(store, ref);
  } catch (err) {
    throw pullFailure(err);
  } finally {
    progress.stop();
  }
  if (opts.json) printJson(ctx, imageDocument(image));
  else {
    ctx.io.out(image.digest);
    ctx.io.info(
      `sbx: pulled ${ref.text} (${platformText(image.platform)}, ${image.layers.length} layer${image.layers.length === 1 ? "" : "s"}, ${sizeText(image.size)})`,
    );
  }
  return ExitCodes.ok;
}

/** A failed pull as sbx says it: image_pull_failed, 75 when trying again may succeed (nothing was kept either way). */
export function pullFailure(err: unknown): unknown {
  if (!(err instanceof ImagePullError)) return err;
  return new SbxError("image_pull_failed", `image pull failed: ${err.message}`, {
    exitCode: err.retryable ? ExitCodes.notStarted : ExitCodes.usage,
    hint: err.retryable ? "nothing was kept; safe to try again" : "nothing was kept",
  });
}

/** Bound to `sbx image pull` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ ref: c.args[0]!, json: c.optsWithGlobals().json === true }, ctx);
