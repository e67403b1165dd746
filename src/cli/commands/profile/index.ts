// sbx profile: named backends (API URL and key).
// Here: the declarations of its verbs (what --help, the man page and the completions
// read); each verb's run code is its own module, loaded only when that verb runs.

import type { Command } from "commander";
import { type Bind, withExamples, declareNoun } from "../../command.js";

export function register(program: Command, bind: Bind): void {
  declareNoun(program, bind, {
    name: "profile",
    summary: "manage backend profiles",
    description:
      "A profile names a backend: an API URL and, when it needs one, an API key. `local` (the\n" +
      "embedded backend) always exists and needs neither. Keys are read from stdin, stored in a\n" +
      "0600 file, and never printed. Precedence: flag > environment > profile > default.",
    verbs: [declareAdd, declareList, declareUse, declareShow, declareRm],
    examples: [
      {
        command: 'printf %s "$KEY" | sbx profile add prod --api-url "$URL" --api-key-stdin',
        description: "a remote backend with a key",
      },
      { command: "sbx profile use prod", description: "use it from now on" },
      { command: "sbx profile list", description: "all profiles, the current one marked *" },
    ],
  });
}

function declareAdd(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("add")
    .summary("add or replace a profile")
    .description(
      "Add (or replace) a profile. The key is read from stdin with --api-key-stdin (never from a\n" +
        "flag, where it would show in `ps` and shell history); SBX_API_KEY also works per command.\n" +
        "A key is never sent over plain http:// to a host other than this machine's loopback: sbx\n" +
        "refuses (exit 125) before connecting, unless the profile was added with --insecure.",
    )
    .argument("<name>", "profile name")
    .option("--api-url <url>", "https://host[:port] or unix:/path.sock")
    .option("--api-key-stdin", "read the API key from stdin")
    .option("--insecure", "let the key go over plain http:// to another machine (trusted network)")
    .option("--use", "make it the current profile")
    .option("--json", "print the saved profile (without the key)")
    .action(bind(() => import("./add.js")));
  withExamples(cmd, [
    {
      command: 'printf %s "$KEY" | sbx profile add prod --api-url "$URL" --api-key-stdin',
      description: "a remote backend with a key",
    },
    {
      command: "sbx profile add team --api-url http://build-host:7070 --insecure",
      description: "a shared daemon (daemon run --listen: plain http) on a trusted network",
    },
  ]);
}

function declareList(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("list")
    .alias("ls")
    .summary("list profiles (the current one marked *)")
    .description("List profiles. Keys are never shown, only whether one is stored.")
    .option("--json", "print {profiles: [...]}")
    .action(bind(() => import("./list.js")));
  withExamples(cmd, [{ command: "sbx profile list", description: "all profiles" }]);
}

function declareShow(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("show")
    .summary("show a profile (default: the one in effect)")
    .description("Show a profile's API URL and whether a key is stored. The key itself is never shown.")
    .argument("[name]", "profile name")
    .option("--json", "print the profile as JSON")
    .action(bind(() => import("./show.js")));
  withExamples(cmd, [{ command: "sbx profile show", description: "the profile in effect" }]);
}

function declareUse(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("use")
    .summary("make a profile the current one")
    .description("Make NAME the profile used when neither --profile nor SBX_PROFILE says otherwise.")
    .argument("<name>", "profile name")
    .action(bind(() => import("./use.js")));
  withExamples(cmd, [{ command: "sbx profile use local", description: "back to the embedded backend" }]);
}

function declareRm(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("rm")
    .summary("remove a profile and its stored key")
    .description("Remove a profile and its stored key. Receipts sent through it are kept.")
    .argument("<name>", "profile name")
    .action(bind(() => import("./rm.js")));
  withExamples(cmd, [{ command: "sbx profile rm staging", description: "forget staging" }]);
}
