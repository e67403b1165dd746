// sbx image import FILE[:TAG]: sbx image pull oci-archive:FILE[:TAG] (docs/images.md, "Sources").

import type { RunFn } from "../../command.js";
import { run as pull } from "./pull.js";

/** Bound to `sbx image import` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  pull({ ref: `oci-archive:${c.args[0]!}`, json: c.optsWithGlobals().json === true }, ctx);
