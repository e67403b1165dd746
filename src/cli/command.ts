// The small framework of the command tree: a binder that turns a verb's command
// module into a commander action (loaded only when that command runs: the tree itself
// is cheap to build for --help, the man page and the completions), and declared
// examples that feed --help, the man page and the completions alike.

import { type Command, InvalidArgumentError } from "commander";
import type { Context, GlobalOptions } from "./context.js";
import { parseDuration } from "../common/duration.js";
import { ExitCodes } from "../common/exit-codes.js";
import type { ColorChoice, IO } from "./io/io.js";

export interface Runtime {
  io: IO;
  env: NodeJS.ProcessEnv;
  /** Aborted by SIGTERM, and by Ctrl-C unless a first-Ctrl-C handler takes that one. */
  interrupt: AbortSignal;
  /** Lets the next first Ctrl-C call `handler` instead of aborting; returns the undo. */
  onFirstInterrupt: (handler: () => void) => () => void;
  exitCode: number;
  /**
   * The process exits as soon as the command is done (bin/sbx, the release binary):
   * the receipt store is then left to the exit rather than closed. Closing SQLite's
   * last connection checkpoints the WAL into the database, a durable write of its own
   * on every command, for nothing: what was committed is durable in the WAL already,
   * and the next opener reads it there.
   */
  exitsAfter?: boolean;
}

export type RunFn = (ctx: Context, cmd: Command) => Promise<number | undefined>;
/** A verb's command module (src/cli/commands/…/VERB.ts): what the command runs. */
export interface CommandModule {
  action: RunFn;
}
/** Binds a command to its module, imported when the command runs. */
export type Bind = (load: () => Promise<CommandModule>) => (...args: unknown[]) => Promise<void>;

/** The root of the tree a command belongs to (commands that print the whole tree). */
export function rootOf(cmd: Command): Command {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c;
}

export function makeBinder(rt: Runtime): Bind {
  return (load) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      // The command's module and the context (client, store) only now that a command runs.
      const [{ action: run }, { createContext }] = await Promise.all([load(), import("./context.js")]);
      const globals = cmd.optsWithGlobals() as GlobalOptions;
      const ctx = createContext(rt.io, rt.env, globals, rt.interrupt, rt.onFirstInterrupt, {
        leaveStoreOpen: rt.exitsAfter === true,
      });
      // Colour: --no-color > NO_COLOR/FORCE_COLOR > the `color` setting > the terminal.
      ctx.io = rt.io.configure({
        color: globals.color === false ? "never" : colorSetting(ctx),
        quiet: globals.quiet === true,
        verbose: globals.verbose === true,
      });
      try {
        const code = await run(ctx, cmd);
        rt.exitCode = code ?? ExitCodes.ok;
      } finally {
        await ctx.close();
      }
    };
}

/** The `color` setting; a config file that cannot be read leaves it to the terminal. */
function colorSetting(ctx: Context): ColorChoice {
  if (ctx.env.FORCE_COLOR !== undefined && ctx.env.FORCE_COLOR !== "") return "auto";
  try {
    const v = ctx.config.read().settings.color;
    return v === "always" || v === "never" ? v : "auto";
  } catch {
    return "auto";
  }
}

/** Nouns whose verbs are declared only when needed: see declareVerbsLater. */
const PENDING = new WeakMap<Command, Map<Command, () => void>>();

/**
 * Declares a noun's verbs when it is the command being run (commander's
 * preSubcommand hook on the root), or when the whole tree is read (completeTree):
 * `sbx --version` and `sbx exec` never build `sbx process …`'s eighty options.
 */
export function declareVerbsLater(noun: Command, declare: () => void): void {
  const root = rootOf(noun);
  let pending = PENDING.get(root);
  if (!pending) {
    const map = new Map<Command, () => void>();
    pending = map;
    PENDING.set(root, map);
    root.hook("preSubcommand", (_root, sub) => {
      const run = map.get(sub);
      map.delete(sub);
      run?.();
    });
  }
  pending.set(noun, declare);
}

/** A verb's declaration: what it takes and teaches, and the module it runs (bound with `bind`). */
export type DeclareVerb = (noun: Command, bind: Bind) => void;

export interface NounSpec {
  name: string;
  summary: string;
  description: string;
  /** In the order --help lists them; declared only when the noun runs or the tree is read. */
  verbs: readonly DeclareVerb[];
  examples: Example[];
}

/** Declares a noun (`sbx process`) with its help; its verbs are declared later (declareVerbsLater). */
export function declareNoun(program: Command, bind: Bind, spec: NounSpec): Command {
  const noun = program.command(spec.name).summary(spec.summary).description(spec.description);
  declareVerbsLater(noun, () => {
    for (const declare of spec.verbs) declare(noun, bind);
  });
  withExamples(noun, spec.examples);
  return noun;
}

/** Declares every verb still pending: for what reads the whole tree (help, completions, the man page). */
export function completeTree(cmd: Command): Command {
  const root = rootOf(cmd);
  const pending = PENDING.get(root);
  if (pending) {
    for (const [noun, declare] of [...pending]) {
      pending.delete(noun);
      declare();
    }
  }
  return root;
}

export interface Example {
  command: string;
  description: string;
}

const EXAMPLES = new WeakMap<Command, Example[]>();

/** Declares examples: shown under --help and in the man page. */
export function withExamples(cmd: Command, examples: Example[]): Command {
  EXAMPLES.set(cmd, examples);
  // Descriptions line up in the column that keeps the most examples on one line of 80
  // columns; an example that would not fit there has its description on the next line.
  const fits = (e: Example, col: number) => e.command.length <= col && 4 + col + 3 + e.description.length <= 80;
  const aligned = (col: number) => examples.filter((e) => fits(e, col)).length;
  const width = examples
    .map((e) => e.command.length)
    .sort((a, b) => a - b)
    .reduce((best, col) => (aligned(col) > aligned(best) ? col : best), 0);
  const text = examples
    .map((e) =>
      fits(e, width) ? `  $ ${e.command.padEnd(width)}   ${e.description}` : `  $ ${e.command}\n      ${e.description}`,
    )
    .join("\n");
  return cmd.addHelpText("after", `\nExamples:\n${text}\n`);
}

export function examplesOf(cmd: Command): Example[] {
  return EXAMPLES.get(cmd) ?? [];
}

/** Enumerated values of an option, for completions. */
const CHOICES = new WeakMap<Command, Map<string, readonly string[]>>();

export function declareChoices(cmd: Command, option: string, values: readonly string[]): void {
  const m = CHOICES.get(cmd) ?? new Map<string, readonly string[]>();
  m.set(option, values);
  CHOICES.set(cmd, m);
}

export function choicesOf(cmd: Command, option: string): readonly string[] | undefined {
  return CHOICES.get(cmd)?.get(option);
}

/** Commander argument parser for a duration flag (checked again for ranges in run()). */
export function durationArg(value: string): number {
  const ms = parseDuration(value);
  if (ms === null) throw new InvalidArgumentError(`not a duration (use e.g. 1500ms, 30s, 2m)`);
  return ms;
}

export function positiveIntArg(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError("must be a positive whole number");
  return Number(value);
}

export function wholeNumberArg(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("must be a whole number");
  return Number(value);
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * Values the generated completions compute at completion time rather than list:
 * receipt ids from the local store, what the backend knows (sandbox names, process
 * names, job ids: `sbx __complete`), file names, or a command line of its own (after --).
 */
export type ValueCompletion = "receipt-id" | BackendWords | "file" | "command";
/** Completed from what the backend knows, by `sbx __complete KIND` (src/cli/commands/complete-words.ts). */
export type BackendWords = "sandbox-name" | "process-name" | "job-id";

const COMPLETIONS = new WeakMap<Command, Map<string, ValueCompletion>>();

/** Marks an argument (`"<id>"`) or an option (`"--env-file"`) as completing ids, files or a command. */
export function declareCompletion(cmd: Command, target: string, kind: ValueCompletion): void {
  const m = COMPLETIONS.get(cmd) ?? new Map<string, ValueCompletion>();
  m.set(target, kind);
  COMPLETIONS.set(cmd, m);
}

export function completionOf(cmd: Command, target: string): ValueCompletion | undefined {
  return COMPLETIONS.get(cmd)?.get(target);
}
