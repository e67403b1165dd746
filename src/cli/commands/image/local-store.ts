// The local backend's image store, for `sbx image`: these commands read and write it
// directly (a remote backend's store is its own).

import path from "node:path";
import { ConfigError, UsageError } from "../../../common/errors.js";
import { ImageStore } from "../../../backend/images/index.js";
import { canonicalRef, ImageRefError, type ImageRef, parseImageRef } from "../../../backend/images/index.js";
import { ensurePrivateDir } from "../../../config/paths.js";
import type { Context } from "../../context.js";

export function localImageStore(ctx: Context): ImageStore {
  const ep = ctx.endpoint();
  if (!ep.autoStart) {
    throw new ConfigError(
      `sbx image works on the local backend's store; profile ${ep.profile ?? ep.apiUrl} is another backend`,
      "a remote backend pulls an image itself at sbx sandbox create --image REF",
    );
  }
  ensurePrivateDir(ctx.paths.daemonDir, ctx.paths.stateDir);
  return new ImageStore(ctx.paths.daemonDir);
}

/** A reference as typed, with an oci: directory made absolute (from where sbx runs). */
export function imageRefArg(text: string): ImageRef {
  let ref: ImageRef;
  try {
    ref = parseImageRef(text);
  } catch (err) {
    if (err instanceof ImageRefError) throw new UsageError(err.message);
    throw err;
  }
  if (ref.kind === "oci-archive") {
    const file = path.resolve(ref.file);
    return { ...ref, file, text: canonicalRef({ ...ref, file }) };
  }
  if (ref.kind === "oci") {
    const dir = path.resolve(ref.dir);
    return { ...ref, dir, text: canonicalRef({ ...ref, dir }) };
  }
  return ref;
}
