// The command tree. Generated docs (man page, completions) read this same tree.

import { Command, Help, Option } from "commander";
import { VERSION } from "../version.js";
import { type Bind, makeBinder, type Runtime, withExamples } from "./command.js";
import {
  declareCancel,
  declareCompleteWords,
  declareCompletionCommand,
  declareCp,
  declareAttach,
  declareExec,
  declareHelp,
  declareInit,
  declareLogs,
  declareMcp,
  declarePort,
  declarePortForward,
  declareRecover,
  declareShell,
  declareVersion,
} from "./commands/index.js";
import * as configCmd from "./commands/config/index.js";
import * as daemon from "./commands/daemon/index.js";
import * as image from "./commands/image/index.js";
import * as jobs from "./commands/jobs/index.js";
import * as processCmd from "./commands/process/index.js";
import * as profile from "./commands/profile/index.js";
import * as receipts from "./commands/receipts/index.js";
import * as sandbox from "./commands/sandbox/index.js";
import * as volume from "./commands/volume/index.js";
import { declareRun } from "./commands/run/index.js";

type Declare = (program: Command, bind: Bind) => void;

/**
 * Every top-level command's declaration, in the order help lists them. The words that
 * read the whole tree (help, completion, __complete) are left out of the table's use
 * for `only`: they always get all of it.
 */
const TOP_LEVEL: Record<string, Declare> = {
  exec: declareExec,
  run: declareRun,
  shell: declareShell,
  attach: declareAttach,
  receipts: receipts.register,
  recover: declareRecover,
  logs: declareLogs,
  cancel: declareCancel,
  process: processCmd.register,
  jobs: jobs.register,
  sandbox: sandbox.register,
  image: image.register,
  volume: volume.register,
  cp: declareCp,
  "port-forward": declarePortForward,
  port: declarePort,
  mcp: declareMcp,
  daemon: daemon.register,
  init: declareInit,
  profile: profile.register,
  config: configCmd.register,
  completion: declareCompletionCommand,
  __complete: declareCompleteWords,
  help: declareHelp,
  version: declareVersion,
};

/** Commands that read the whole tree when they run. */
const WHOLE_TREE = new Set(["help", "completion", "__complete"]);

/**
 * The command tree. `only`: the first word of the command line; when it names a
 * top-level command (one that does not read the tree), only that command is declared
 * (with the global options): a command's start does not pay for building every other
 * one's options, help and examples. `--version` needs none. Anything else (an
 * option first, an unknown word to suggest a command for, help) gets the whole tree.
 */
export function buildProgram(rt: Runtime, only?: string): Command {
  const bind: Bind = makeBinder(rt);
  const program = new Command("sbx")
    .description(
      "Run commands in sandboxes and keep an honest, durable receipt of every execution.\n" +
        "With no configuration, sbx starts its own embedded backend (sbx daemon) on demand.",
    )
    .configureHelp({
      // Descriptions are written as paragraphs: a line break inside one is the source's,
      // not the reader's; the terminal's width (80 in a pipe) decides where lines end.
      boxWrap(this: Help, str: string, width: number) {
        return Help.prototype.boxWrap.call(this, unwrapParagraphs(str), width);
      },
    })
    .version(VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .addHelpCommand(false)
    .showSuggestionAfterError(true)
    .option("--profile <name>", "profile to use (env SBX_PROFILE; default: local)")
    .option("--api-url <url>", "backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)")
    .addOption(new Option("--json", "print JSON documents and nothing else on stdout"))
    .option("--no-color", "no colour (also NO_COLOR)")
    .option("-q, --quiet", "print only data")
    .option("--verbose", "say more on stderr");
  for (const declare of declaredFor(only)) declare(program, bind);
  withExamples(program, [
    { command: "sbx exec -- echo hello", description: "run argv in the default local sandbox" },
    { command: "sbx receipts list", description: "what ran, newest first" },
    { command: "sbx receipts show rcp_7k2m9qfd", description: "one receipt, with its attempts and observations" },
    { command: "sbx help exit-codes", description: "what each exit code and classification means" },
  ]);
  return program;
}

function declaredFor(only: string | undefined): Declare[] {
  if (only === "--version" || only === "-V") return [];
  const one = only === undefined || WHOLE_TREE.has(only) || !Object.hasOwn(TOP_LEVEL, only) ? null : TOP_LEVEL[only];
  return one ? [one] : Object.values(TOP_LEVEL);
}

/** Joins the lines of each paragraph; blank lines and indented (preformatted) lines stay. */
export function unwrapParagraphs(text: string): string {
  return text.replace(/([^\n])\n(?=[^\s])/g, "$1 ");
}
