// sbx profile list

import type { Command } from "commander";
import { LOCAL_PROFILE } from "../../../config/config.js";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printTable } from "../../render/table.js";

export interface ProfileSummary {
  profile: string;
  api_url: string;
  api_key: boolean;
  current: boolean;
}

export function profileSummaries(ctx: Context): ProfileSummary[] {
  const doc = ctx.config.read();
  const current = ctx.env.SBX_PROFILE || doc.current_profile || LOCAL_PROFILE;
  const local: ProfileSummary = {
    profile: LOCAL_PROFILE,
    api_url: `unix:${ctx.paths.socketPath}`,
    api_key: false,
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
        current: current === name,
      })),
  ];
}

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const rows = profileSummaries(ctx);
  if (opts.json) printJson(ctx, { profiles: rows });
  else
    printTable(
      ctx.io,
      ["", "PROFILE", "API URL", "KEY"],
      rows.map((r) => [r.current ? "*" : "", r.profile, r.api_url, r.api_key ? "stored" : "-"]),
    );
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("list")
    .alias("ls")
    .summary("list profiles (the current one marked *)")
    .description("List profiles. Keys are never shown, only whether one is stored.")
    .option("--json", "print {profiles: [...]}")
    .action(bind(async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx)));
  withExamples(cmd, [{ command: "sbx profile list", description: "all profiles" }]);
}
