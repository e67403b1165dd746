// sbx process: supervised background workers (alias: sbx ps = sbx process list).

import { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import * as list from "./list.js";
import * as logs from "./logs.js";
import * as rm from "./rm.js";
import * as result from "./result.js";
import * as show from "./show.js";
import * as signal from "./signal.js";
import * as start from "./start.js";
import * as stdin from "./stdin.js";
import * as stop from "./stop.js";

export function register(program: Command, bind: Bind): void {
  const noun = program
    .command("process")
    .summary("supervised background processes")
    .description(
      "Workers that outlive sbx, supervised by the backend: restart policies with back-off, logs by\n" +
        "logical offset across restarts and rotation, stdin, signals.",
    );
  start.register(noun, bind);
  list.register(noun, bind);
  show.register(noun, bind);
  logs.register(noun, bind);
  result.register(noun, bind);
  stdin.register(noun, bind);
  signal.register(noun, bind);
  stop.register(noun, bind);
  rm.register(noun, bind);
  withExamples(noun, [
    { command: "sbx process start --name web -- python3 -m http.server 8000", description: "a named worker" },
    { command: "sbx process logs web -f", description: "follow its output" },
    { command: "sbx ps", description: "what runs in the default sandbox" },
  ]);
  const ps = list.configureList(
    new Command("ps")
      .summary("list supervised processes (sbx process list)")
      .description("Same as `sbx process list`."),
    bind,
  );
  program.addCommand(ps);
  withExamples(ps, [{ command: "sbx ps", description: "what runs in the default sandbox" }]);
}
