// sbx config get|set: settings in the config file (the declarations; get.ts and set.ts run).

import type { Command } from "commander";
import { SETTINGS } from "../../../config/config.js";
import { type Bind, declareChoices, withExamples, declareVerbsLater } from "../../command.js";

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
  declareVerbsLater(noun, () => {
    const get = noun
      .command("get")
      .summary("print a setting (all settings without KEY)")
      .description("Print a setting's value; exits 1 when it is not set.")
      .argument("[key]", "setting name")
      .option("--json", "print as JSON")
      .action(bind(() => import("./get.js")));
    declareChoices(get, "[key]", Object.keys(SETTINGS));
    withExamples(get, [{ command: "sbx config get timeout", description: "the default exec timeout" }]);
    const set = noun
      .command("set")
      .summary("change a setting")
      .description("Change a setting.")
      .argument("<key>", "setting name")
      .argument("<value>", "new value")
      .action(bind(() => import("./set.js")));
    declareChoices(set, "<key>", Object.keys(SETTINGS));
    withExamples(set, [{ command: "sbx config set timeout 5m", description: "longer default timeout for exec" }]);
  });
}
