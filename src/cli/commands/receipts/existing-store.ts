// Evidence is read, never made: `receipts verify` and `receipts export --bundle` in a
// home with no receipt store (a mistyped SBX_HOME during an incident) say so instead of
// creating an empty store there (and, for a bundle, a signing key) and answering
// "intact" or signing 0 receipts.

import fs from "node:fs";
import { LocalStateError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import type { Context } from "../../context.js";

/** Throws (74) when the home has no receipt store; `nothing` says what cannot be done ("nothing to verify"). */
export function requireExistingStore(ctx: Context, nothing: string): void {
  if (fs.existsSync(ctx.paths.receiptsDb)) return;
  throw new LocalStateError(
    "no_receipt_store",
    `no receipt store at ${ctx.paths.receiptsDb}: nothing was recorded with this home, so there is ${nothing}`,
    ExitCodes.storeUnusable,
    "check SBX_HOME (or XDG_STATE_HOME): sbx reads the store of the home it is given, and makes none for this",
  );
}
