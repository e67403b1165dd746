// The entry point: builds the tree, runs one command, and is the one place that
// turns errors into exit codes (how: error-report.ts).

import { type Command, CommanderError } from "commander";
import type { Runtime } from "./command.js";
import { ExitCodes } from "../common/exit-codes.js";
import { ExitWith } from "../common/errors.js";
import { createProcessIO, type IO } from "./io/io.js";
import { buildProgram } from "./program.js";

export async function main(
  argv: string[],
  io: IO = createProcessIO(),
  env: NodeJS.ProcessEnv = process.env,
  /** `interrupt`: aborted as SIGTERM would (tests that run sbx in-process and stop it). */
  opts: { exitsAfter?: boolean; interrupt?: AbortSignal } = {},
): Promise<number> {
  const controller = new AbortController();
  opts.interrupt?.addEventListener("abort", () => controller.abort(), { once: true });
  // Ctrl-C: a command may take the first one (exec cancels its execution); the one
  // that aborts also gives SIGINT back to its default, so one more kills sbx outright.
  let firstInterrupt: (() => void) | null = null;
  const onSigint = () => {
    const handler = firstInterrupt;
    firstInterrupt = null;
    if (handler) return handler();
    process.removeListener("SIGINT", onSigint);
    controller.abort();
  };
  const onSigterm = () => controller.abort();
  process.on("SIGINT", onSigint);
  process.once("SIGTERM", onSigterm);
  const rt: Runtime = {
    io,
    env,
    interrupt: controller.signal,
    onFirstInterrupt: (handler) => {
      if (!controller.signal.aborted) firstInterrupt = handler;
      return () => {
        if (firstInterrupt === handler) firstInterrupt = null;
      };
    },
    exitCode: ExitCodes.ok,
    exitsAfter: opts.exitsAfter === true,
  };
  // Only the command asked for is declared (the whole tree for help and the like).
  const program = buildProgram(rt, argv[0]);
  // Commander copies these settings only to commands created later: set them on all.
  const configure = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (s) => io.writeOut(s),
      writeErr: (s) => io.writeErr(s),
      // Help fits the width the IO reports (COLUMNS first), not process.stdout's.
      getOutHelpWidth: () => io.stdoutColumns ?? 80,
      outputError: (s, write) => write(s.startsWith("error:") ? `sbx: ${s.slice("error: ".length)}` : s),
    });
    cmd.commands.forEach(configure);
  };
  configure(program);
  // Nothing asked: the help is the answer, on stdout like any data.
  if (argv.length === 0) {
    io.writeOut(program.helpInformation());
    return ExitCodes.ok;
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return rt.exitCode;
  } catch (err) {
    if (err instanceof ExitWith) return err.exitCode;
    if (err instanceof CommanderError) {
      if (["commander.helpDisplayed", "commander.version", "commander.help"].includes(err.code)) return ExitCodes.ok;
      if (err.code === "commander.unknownOption" && argv.includes("exec") && !argv.includes("--")) {
        io.err("hint: put the command after --, e.g. sbx exec -- ls -la");
      }
      return ExitCodes.usage;
    }
    const { describeError } = await import("./error-report.js");
    const { lines, exit } = describeError(err, env, { verbose: argv.includes("--verbose") });
    for (const l of lines) io.err(l);
    return exit;
  } finally {
    process.removeListener("SIGINT", onSigint);
    process.removeListener("SIGTERM", onSigterm);
  }
}
