import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printSandboxes, sandboxDocument } from "./render.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { UsageError } from "../../../common/errors.js";
import { selectorFromFlags } from "./labels.js";

export interface ListOptions {
  json: boolean;
  /** Only sandboxes whose labels satisfy it (k=v,k2,k3!=v: all of it). */
  selector: string | undefined;
  /** A LABELS column. */
  showLabels: boolean;
}

export async function run(opts: ListOptions, ctx: Context): Promise<number> {
  const sandboxes = await (await ctx.api()).listSandboxes(opts.selector);
  if (opts.selector !== undefined && sandboxes.length === 0) {
    throw new UsageError(
      `no sandbox matches --label ${opts.selector}`,
      "sbx sandbox list --show-labels shows their labels",
    );
  }
  if (opts.json) printJson(ctx, { sandboxes: sandboxes.map(sandboxDocument) });
  else await printSandboxes(ctx.io, sandboxes, { labels: opts.showLabels });
  return ExitCodes.ok;
}

/** Bound to `sbx sandbox list` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals() as { json?: boolean; label?: string[]; showLabels?: boolean };
  return run({ json: o.json === true, selector: selectorFromFlags(o.label), showLabels: o.showLabels === true }, ctx);
};
