// sbx version: the version, as --version prints it; with --json, what scripts check.

import { PROTOCOL_VERSION } from "../../protocol/types.js";
import { VERSION } from "../../version.js";
import { ExitCodes } from "../../common/exit-codes.js";
import type { RunFn } from "../command.js";

export const action: RunFn = async (ctx, c) => {
  if (c.optsWithGlobals().json === true) {
    ctx.io.out(JSON.stringify({ version: VERSION, protocol: PROTOCOL_VERSION }));
  } else ctx.io.out(VERSION);
  return ExitCodes.ok;
};
