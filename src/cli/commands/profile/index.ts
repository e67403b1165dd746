// sbx profile: named backends (API URL and key).

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import * as add from "./add.js";
import * as list from "./list.js";
import * as rm from "./rm.js";
import * as show from "./show.js";
import * as use from "./use.js";

export function register(program: Command, bind: Bind): void {
  const noun = program
    .command("profile")
    .summary("manage backend profiles")
    .description(
      "A profile names a backend: an API URL and, when it needs one, an API key. `local` (the\n" +
        "embedded backend) always exists and needs neither. Keys are read from stdin, stored in a\n" +
        "0600 file, and never printed. Precedence: flag > environment > profile > default.",
    );
  add.register(noun, bind);
  list.register(noun, bind);
  use.register(noun, bind);
  show.register(noun, bind);
  rm.register(noun, bind);
  withExamples(noun, [
    {
      command: 'printf %s "$KEY" | sbx profile add prod --api-url https://sbx.example.com --api-key-stdin',
      description: "a remote backend with a key",
    },
    { command: "sbx profile use prod", description: "use it from now on" },
    { command: "sbx profile list", description: "all profiles, the current one marked *" },
  ]);
}
