// The command tree as data, for the generated docs: one walk over commander's tree
// (public API only) that the man page and every completion script read.

import type { EventEmitter } from "node:events";
import { type Command, Help, type Option } from "commander";
import { choicesOf, collect, completionOf, type Example, examplesOf, type ValueCompletion } from "../command.js";

export interface OptionDoc {
  /** As declared, e.g. `-s, --sandbox <id>`. */
  flags: string;
  short: string | undefined;
  long: string | undefined;
  /** The short and long forms that exist, short first. */
  names: string[];
  takesValue: "none" | "required" | "optional";
  /** `id` for `--sandbox <id>`. */
  valueName: string | undefined;
  description: string;
  choices: readonly string[] | undefined;
  completes: ValueCompletion | undefined;
  repeatable: boolean;
  /** Options that set the same value (`--network` / `--no-network`) exclude each other. */
  attribute: string;
}

export interface ArgumentDoc {
  name: string;
  required: boolean;
  variadic: boolean;
  description: string;
  choices: readonly string[] | undefined;
  completes: ValueCompletion | undefined;
}

export interface CommandDoc {
  /** Names from the program down: `["receipts", "list"]`; the program itself is `[]`. */
  path: string[];
  name: string;
  aliases: string[];
  summary: string;
  description: string;
  /** commander's usage after the command path, e.g. `[options] <id>`. */
  usage: string;
  /** The command's own options, without the help option (that one is global). */
  options: OptionDoc[];
  arguments: ArgumentDoc[];
  subcommands: CommandDoc[];
  examples: Example[];
  /** Extra help text added with addHelpText (examples excluded: they are in `examples`). */
  notes: string[];
}

const help = new Help();

function describeOption(cmd: Command, o: Option): OptionDoc {
  const names = [o.short, o.long].filter((n): n is string => n !== undefined);
  const valueName = /[<[]([^>\]]+)[>\]]/.exec(o.flags)?.[1];
  const choices = names.map((n) => choicesOf(cmd, n)).find((c) => c !== undefined) ?? o.argChoices;
  return {
    flags: o.flags,
    short: o.short,
    long: o.long,
    names,
    takesValue: o.required ? "required" : o.optional ? "optional" : "none",
    valueName,
    description: o.description,
    choices,
    // Every -s/--sandbox names a sandbox: completed with the backend's sandbox names.
    completes:
      names.map((n) => completionOf(cmd, n)).find((c) => c !== undefined) ??
      (o.long === "--sandbox" ? "sandbox-name" : undefined),
    repeatable: o.variadic || o.parseArg === collect,
    attribute: o.attributeName(),
  };
}

function describeArgument(cmd: Command, a: Command["registeredArguments"][number]): ArgumentDoc {
  const name = a.name();
  const dots = a.variadic ? "..." : "";
  // Declared by how it reads in usage: `<id>`, `[key]`, `[argv...]`.
  const keys = [`<${name}${dots}>`, `[${name}${dots}]`, `<${name}>`, `[${name}]`, name];
  return {
    name,
    required: a.required,
    variadic: a.variadic,
    description: a.description,
    choices: keys.map((k) => choicesOf(cmd, k)).find((c) => c !== undefined) ?? a.argChoices,
    completes: keys.map((k) => completionOf(cmd, k)).find((c) => c !== undefined),
  };
}

/**
 * Extra help text registered with addHelpText, captured through the help events
 * (commander's Command is an EventEmitter; its typings do not say so).
 */
function notesOf(cmd: Command): string[] {
  const chunks: string[] = [];
  const context = { error: false, command: cmd, write: (s: string) => chunks.push(s) };
  const events = cmd as unknown as EventEmitter;
  events.emit("beforeHelp", context);
  events.emit("afterHelp", context);
  return chunks.map((c) => c.replace(/^\n+|\s+$/g, "")).filter((c) => c !== "" && !c.startsWith("Examples:"));
}

function describeCommand(cmd: Command, path: string[]): CommandDoc {
  const description = cmd.description();
  // The implicit `help` command commander adds to nouns is not part of the tree.
  const subs = help.visibleCommands(cmd).filter((c) => cmd.commands.includes(c));
  return {
    path,
    name: cmd.name(),
    aliases: cmd.aliases(),
    summary: cmd.summary() || (description.split("\n")[0] ?? ""),
    description,
    usage: cmd.usage(),
    options: help
      .visibleOptions(cmd)
      .filter((o) => cmd.options.includes(o))
      .map((o) => describeOption(cmd, o)),
    arguments: cmd.registeredArguments.map((a) => describeArgument(cmd, a)),
    subcommands: subs.map((c) => describeCommand(c, [...path, c.name()])),
    examples: examplesOf(cmd),
    notes: notesOf(cmd),
  };
}

export function describeProgram(program: Command): CommandDoc {
  return describeCommand(program, []);
}

/**
 * Options that apply everywhere: the program's own (commander reads them wherever they
 * appear, as no command uses positional options) and the help option.
 */
export function globalOptions(program: Command): OptionDoc[] {
  return help.visibleOptions(program).map((o) => describeOption(program, o));
}

/** Every command below the program, depth-first in registration order. */
export function allCommands(root: CommandDoc): CommandDoc[] {
  return root.subcommands.flatMap((c) => [c, ...allCommands(c)]);
}

/** Global options that a command does not redefine itself (its own `--json` wins). */
export function inheritedOptions(globals: OptionDoc[], cmd: CommandDoc): OptionDoc[] {
  const own = new Set(cmd.options.flatMap((o) => o.names));
  return globals.filter((g) => !g.names.some((n) => own.has(n)));
}

/** Every option accepted at a command: its own, then the inherited globals. */
export function optionsAt(globals: OptionDoc[], cmd: CommandDoc): OptionDoc[] {
  return [...cmd.options, ...inheritedOptions(globals, cmd)];
}
