// sbx profile use

import type { Command } from "commander";
import { LOCAL_PROFILE } from "../../../config/config.js";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { NotFoundError } from "../../errors.js";
import { checkProfileName } from "./add.js";

export async function run(opts: { name: string }, ctx: Context): Promise<number> {
  ctx.config.update((doc) => {
    if (opts.name !== LOCAL_PROFILE && !doc.profiles[opts.name]) {
      throw new NotFoundError(`no profile named ${JSON.stringify(opts.name)}`, "see `sbx profile list`");
    }
    doc.current_profile = opts.name;
  });
  ctx.io.info(`sbx: now using profile ${opts.name}`);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("use")
    .summary("make a profile the current one")
    .description("Make NAME the profile used when neither --profile nor SBX_PROFILE says otherwise.")
    .argument("<name>", "profile name")
    .action(bind(async (ctx, c) => run({ name: checkProfileName(c.args[0]!) }, ctx)));
  withExamples(cmd, [{ command: "sbx profile use local", description: "back to the embedded backend" }]);
}
