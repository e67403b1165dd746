// sbx sandbox: create, list, show and remove sandboxes.

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import * as create from "./create.js";
import * as list from "./list.js";
import * as rm from "./rm.js";
import * as show from "./show.js";

export function register(program: Command, bind: Bind): void {
  const noun = program
    .command("sandbox")
    .summary("manage sandboxes")
    .description(
      "A sandbox is a workspace where commands run; inside it /workspace is its own directory.\n" +
        "The embedded backend creates `default` on first use.",
    );
  create.register(noun, bind);
  list.register(noun, bind);
  show.register(noun, bind);
  rm.register(noun, bind);
  withExamples(noun, [
    { command: "sbx sandbox create build", description: "a sandbox named build" },
    { command: "sbx sandbox list", description: "all sandboxes" },
  ]);
}
