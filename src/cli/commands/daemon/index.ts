// sbx daemon: the embedded backend.

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import * as run from "./run.js";
import * as start from "./start.js";
import * as status from "./status.js";
import * as stop from "./stop.js";

export function register(program: Command, bind: Bind): void {
  const noun = program
    .command("daemon")
    .summary("run, start, stop and inspect the embedded backend")
    .description(
      "The embedded backend serves the same /api/v1 as a remote one, on a Unix socket private to its\n" +
        "user. sbx starts it on demand for the local profile (it exits after 10 idle minutes with\n" +
        "nothing running); these commands manage it by hand.",
    );
  run.register(noun, bind);
  start.register(noun, bind);
  stop.register(noun, bind);
  status.register(noun, bind);
  withExamples(noun, [
    { command: "sbx daemon status", description: "is the embedded backend running?" },
    { command: "sbx daemon stop", description: "stop it (the next command starts it again)" },
  ]);
}
