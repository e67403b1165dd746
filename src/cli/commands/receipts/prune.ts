// sbx receipts prune: delete old receipts.

import { IN_DOUBT } from "../../../receipts/classifications.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { parseTimeArg } from "../../duration.js";
import { UsageError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface PruneOptions {
  before: string;
  includeInDoubt: boolean;
  json: boolean;
}

export function parsePruneOptions(raw: { before?: string; includeInDoubt?: boolean; json?: boolean }): PruneOptions {
  if (raw.before === undefined) {
    throw new UsageError("--before TIME is required: an ISO-8601 time or a duration ago like 30d");
  }
  const before = parseTimeArg(raw.before);
  if (before === null) {
    throw new UsageError(`--before ${JSON.stringify(raw.before)}: use an ISO-8601 time or a duration ago like 30d`);
  }
  return { before, includeInDoubt: raw.includeInDoubt === true, json: raw.json === true };
}

export async function run(opts: PruneOptions, ctx: Context): Promise<number> {
  // Running receipts are kept like the ones in doubt: their result is still to come.
  const keep = opts.includeInDoubt ? {} : { keep: [...IN_DOUBT, "running" as const] };
  const { deleted, kept } = await ctx.storeWrite((store) => store.prune(opts.before, keep));
  if (opts.json) printJson(ctx, { deleted, before: opts.before, kept_in_doubt: kept });
  else {
    ctx.io.out(`deleted ${deleted} receipt${deleted === 1 ? "" : "s"} created before ${opts.before}`);
    if (kept > 0) {
      ctx.io.info(
        `sbx: kept ${kept} receipt${kept === 1 ? "" : "s"} in doubt or still running (--include-in-doubt deletes them too)`,
      );
    }
  }
  return ExitCodes.ok;
}

/** Bound to `sbx receipts prune` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parsePruneOptions(c.optsWithGlobals()), ctx);
