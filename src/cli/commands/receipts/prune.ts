// sbx receipts prune: delete old receipts.

import type { Command } from "commander";
import { IN_DOUBT } from "../../../receipts/classify.js";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { parseTimeArg } from "../../duration.js";
import { UsageError } from "../../errors.js";
import { printJson } from "../../render/outcome.js";

export interface PruneOptions {
  before: string;
  includeInDoubt: boolean;
  json: boolean;
}

export function parsePruneOptions(raw: { before?: string; includeInDoubt?: boolean; json?: boolean }): PruneOptions {
  const before = raw.before === undefined ? null : parseTimeArg(raw.before);
  if (before === null) throw new UsageError("--before TIME is required: an ISO-8601 time or a duration ago like 30d");
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
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("prune")
    .summary("delete receipts created before a time")
    .description(
      "Delete receipts (with their attempts and observations) created before TIME. Receipts still\n" +
        "in doubt (dispatched, outcome_unknown, …) or running are kept unless --include-in-doubt.",
    )
    .requiredOption("--before <time>", "ISO-8601 time, or a duration ago like 30d")
    .option("--include-in-doubt", "also delete receipts that are still in doubt")
    .option("--json", "print {deleted, before, kept_in_doubt}")
    .action(bind(async (ctx, c) => run(parsePruneOptions(c.optsWithGlobals()), ctx)));
  withExamples(cmd, [{ command: "sbx receipts prune --before 30d", description: "keep the last 30 days" }]);
}
