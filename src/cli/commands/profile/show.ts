// sbx profile show

import { selectedProfile } from "../../../client/endpoint.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { NotFoundError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";
import { profileSummaries } from "./list.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(opts: { name: string | undefined; json: boolean }, ctx: Context): Promise<number> {
  const all = profileSummaries(ctx);
  const wanted = opts.name ?? selectedProfile({ profile: ctx.globals.profile }, ctx.env, ctx.config);
  const p = all.find((s) => s.profile === wanted);
  if (!p) throw new NotFoundError(`no profile named ${JSON.stringify(wanted)}`, "see `sbx profile list`");
  if (opts.json) printJson(ctx, p);
  else {
    ctx.io.out(`profile\t${p.profile}${p.current ? " (current)" : ""}`);
    ctx.io.out(`api_url\t${p.api_url}`);
    ctx.io.out(`api_key\t${p.api_key ? "stored (not shown)" : "none"}`);
    if (p.insecure) ctx.io.out("insecure\tyes: its key may go over plain http:// to another machine");
  }
  return ExitCodes.ok;
}

/** Bound to `sbx profile show` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ name: c.args[0], json: c.optsWithGlobals().json === true }, ctx);
