// sbx config get|set: settings in the config file (the declarations; get.ts and set.ts run).

import type { Command } from "commander";
import { SETTINGS } from "../../../config/config.js";
import { type Bind, declareChoices, declareNoun, withExamples } from "../../command.js";

export function register(program: Command, bind: Bind): void {
  declareNoun(program, bind, {
    name: "config",
    summary: "read and change settings",
    description: `Settings stored in the config file:\n${Object.entries(SETTINGS)
      .map(([k, s]) => `  ${k.padEnd(8)} ${s.describe}`)
      .join("\n")}`,
    verbs: [declareGet, declareSet],
    examples: [
      { command: "sbx config get", description: "every setting" },
      { command: "sbx config set sandbox build", description: "exec runs in build unless -s says otherwise" },
    ],
  });
}

function declareGet(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("get")
    .summary("print a setting (all settings without KEY)")
    .description("Print a setting's value; exits 125 when it is not set (with --json: null, exit 0).")
    .argument("[key]", "setting name")
    .option("--json", "print as JSON")
    .action(bind(() => import("./get.js")));
  declareChoices(cmd, "[key]", Object.keys(SETTINGS));
  withExamples(cmd, [{ command: "sbx config get timeout", description: "the default exec timeout" }]);
}

function declareSet(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("set")
    .summary("change a setting")
    .description("Change a setting.")
    .argument("<key>", "setting name")
    .argument("<value>", "new value")
    .action(bind(() => import("./set.js")));
  declareChoices(cmd, "<key>", Object.keys(SETTINGS));
  withExamples(cmd, [{ command: "sbx config set timeout 5m", description: "longer default timeout for exec" }]);
}
