// sbx config get|set: settings in the config file.

import type { Command } from "commander";
import { SETTINGS } from "../../../config/config.js";
import { type Bind, declareChoices, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { ExitCodes, UsageError } from "../../errors.js";
import { printJson } from "../../render/outcome.js";

function checkKey(key: string): string {
  if (!(key in SETTINGS)) {
    throw new UsageError(`unknown setting ${JSON.stringify(key)}`, `settings: ${Object.keys(SETTINGS).join(", ")}`);
  }
  return key;
}

export async function runGet(opts: { key: string | undefined; json: boolean }, ctx: Context): Promise<number> {
  const settings = ctx.config.read().settings;
  if (opts.key === undefined) {
    // Every known setting, null when unset: a fixed set of keys, whatever the file holds.
    if (opts.json) printJson(ctx, Object.fromEntries(Object.keys(SETTINGS).map((k) => [k, settings[k] ?? null])));
    else for (const k of Object.keys(SETTINGS)) ctx.io.out(`${k}\t${settings[k] ?? ""}`);
    return 0;
  }
  const value = settings[checkKey(opts.key)];
  if (opts.json) printJson(ctx, { [opts.key]: value ?? null });
  else if (value !== undefined) ctx.io.out(value);
  return value === undefined && !opts.json ? ExitCodes.failure : ExitCodes.ok;
}

export async function runSet(opts: { key: string; value: string }, ctx: Context): Promise<number> {
  const problem = SETTINGS[checkKey(opts.key)]!.check(opts.value);
  if (problem !== null) throw new UsageError(`${opts.key}: ${problem}`);
  ctx.config.update((doc) => {
    doc.settings[opts.key] = opts.value;
  });
  return 0;
}

export function register(program: Command, bind: Bind): void {
  const noun = program
    .command("config")
    .summary("read and change settings")
    .description(
      `Settings stored in the config file:\n${Object.entries(SETTINGS)
        .map(([k, s]) => `  ${k.padEnd(8)} ${s.describe}`)
        .join("\n")}`,
    );
  withExamples(noun, [
    { command: "sbx config get", description: "every setting" },
    { command: "sbx config set sandbox build", description: "exec runs in build unless -s says otherwise" },
  ]);
  const get = noun
    .command("get")
    .summary("print a setting (all settings without KEY)")
    .description("Print a setting's value; exits 1 when it is not set.")
    .argument("[key]", "setting name")
    .option("--json", "print as JSON")
    .action(bind(async (ctx, c) => runGet({ key: c.args[0], json: c.optsWithGlobals().json === true }, ctx)));
  declareChoices(get, "[key]", Object.keys(SETTINGS));
  withExamples(get, [{ command: "sbx config get timeout", description: "the default exec timeout" }]);
  const set = noun
    .command("set")
    .summary("change a setting")
    .description("Change a setting.")
    .argument("<key>", "setting name")
    .argument("<value>", "new value")
    .action(bind(async (ctx, c) => runSet({ key: c.args[0]!, value: c.args[1]! }, ctx)));
  declareChoices(set, "<key>", Object.keys(SETTINGS));
  withExamples(set, [{ command: "sbx config set timeout 5m", description: "longer default timeout for exec" }]);
}
