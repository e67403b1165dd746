// sbx jobs: one-shot commands with dependencies, queue keys, idempotent admission by
// request id, followed to the end (docs/protocol.md, "Jobs").

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import * as cancel from "./cancel.js";
import * as list from "./list.js";
import * as logs from "./logs.js";
import * as run from "./run.js";
import * as show from "./show.js";
import * as submit from "./submit.js";
import * as wait from "./wait.js";

export function register(program: Command, bind: Bind): void {
  const noun = program
    .command("jobs")
    .summary("one-shot jobs with dependencies and queue keys")
    .description(
      "Jobs are one-shot commands run by the backend: a submission of several, with dependencies\n" +
        "(all_succeeded or all_terminal) and queue keys (one at a time, in order), is admitted once\n" +
        "per request id and followed to the end. A job interrupted by a backend restart is never\n" +
        "resumed: it says so (interrupted, lost).",
    );
  submit.register(noun, bind);
  run.register(noun, bind);
  list.register(noun, bind);
  show.register(noun, bind);
  logs.register(noun, bind);
  wait.register(noun, bind);
  cancel.register(noun, bind);
  withExamples(noun, [
    { command: "sbx jobs submit pipeline.json --wait", description: "a CI pipeline, followed to the end" },
    { command: "sbx jobs run -- make test", description: "one job, like exec" },
    { command: "sbx jobs list --status failed", description: "what failed" },
  ]);
}
