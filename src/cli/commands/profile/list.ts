// sbx profile list

import { LOCAL_PROFILE } from "../../../config/config.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printTable } from "../../render/table.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface ProfileSummary {
  profile: string;
  api_url: string;
  api_key: boolean;
  /** Added with --insecure: its key may go over plain http:// to another machine. */
  insecure: boolean;
  current: boolean;
}

export function profileSummaries(ctx: Context): ProfileSummary[] {
  const doc = ctx.config.read();
  const current = ctx.env.SBX_PROFILE || doc.current_profile || LOCAL_PROFILE;
  const local: ProfileSummary = {
    profile: LOCAL_PROFILE,
    api_url: `unix:${ctx.paths.socketPath}`,
    api_key: false,
    insecure: false,
    current: current === LOCAL_PROFILE,
  };
  return [
    local,
    ...Object.entries(doc.profiles)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, p]) => ({
        profile: name,
        api_url: p.api_url,
        api_key: ctx.config.hasApiKey(name),
        insecure: p.insecure === true,
        current: current === name,
      })),
  ];
}

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const rows = profileSummaries(ctx);
  if (opts.json) printJson(ctx, { profiles: rows });
  else
    await printTable(
      ctx.io,
      ["", "PROFILE", "API URL", "KEY"],
      rows.map((r) => [r.current ? "*" : "", r.profile, r.api_url, r.api_key ? "stored" : "-"]),
    );
  return ExitCodes.ok;
}

/** Bound to `sbx profile list` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx);
