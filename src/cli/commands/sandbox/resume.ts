// sbx sandbox resume: thaw a paused sandbox's processes (pause.ts holds the pair's code).

import type { RunFn } from "../../command.js";
import { checkSandboxRef } from "../../command-flags.js";
import { run } from "./pause.js";

/** Bound to `sbx sandbox resume` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run({ ref: checkSandboxRef(c.args[0]!), json: c.optsWithGlobals().json === true, verb: "resume" }, ctx);
