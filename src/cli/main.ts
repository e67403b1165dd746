// The entry point: builds the tree, runs one command, and is the one place that
// turns errors into exit codes.

import { type Command, CommanderError } from "commander";
import { redactSecrets } from "../client/redact.js";
import { ConfigStore } from "../config/config.js";
import { resolvePaths, UnsafeDirectory } from "../config/paths.js";
import { AmbiguousReceipt, ReceiptNotFound, ReceiptStoreBusy, ReceiptStoreUnusable } from "../receipts/errors.js";
import type { Runtime } from "./command.js";
import { knownSecrets } from "./secrets.js";
import { ExitCodes, ExitWith, SbxError } from "./errors.js";
import { createProcessIO, type IO } from "./io/io.js";
import { buildProgram } from "./program.js";

/** The one place an error becomes lines on stderr and an exit code (src/exit-codes.ts). */
export function describeError(
  err: unknown,
  env: NodeJS.ProcessEnv,
  opts: { verbose?: boolean } = {},
): { lines: string[]; exit: number } {
  const secrets = knownSecrets(env, new ConfigStore(resolvePaths(env)));
  const clean = (s: string) => redactSecrets(s, secrets);
  if (err instanceof SbxError) {
    const lines = [`sbx: ${clean(err.message)}`];
    if (err.hint) lines.push(`hint: ${clean(err.hint)}`);
    return { lines, exit: err.exitCode };
  }
  if (err instanceof ReceiptNotFound) {
    return { lines: [`sbx: ${err.message}`, "hint: see `sbx receipts list`"], exit: ExitCodes.failure };
  }
  if (err instanceof AmbiguousReceipt) {
    return { lines: [`sbx: ${err.message}`, "hint: give more characters of the id"], exit: ExitCodes.failure };
  }
  if (err instanceof ReceiptStoreBusy) {
    return {
      lines: [
        `sbx: ${err.message}; nothing was sent`,
        "hint: try again once it is free; SBX_STORE_WAIT sets how long sbx waits (default 2m)",
      ],
      exit: ExitCodes.notStarted,
    };
  }
  if (err instanceof ReceiptStoreUnusable) {
    return { lines: [`sbx: ${err.message}; nothing was sent`, `hint: ${err.hint}`], exit: ExitCodes.storeUnusable };
  }
  if (err instanceof UnsafeDirectory) {
    return { lines: [`sbx: ${err.message}; nothing was sent`, `hint: ${err.hint}`], exit: ExitCodes.storeUnusable };
  }
  const e = err as Error & { code?: unknown };
  if (e?.name === "BackendError" && typeof e.code === "string") {
    // The embedded backend's own start-up errors (daemon_already_running, bad fault spec, …).
    const exit =
      e.code === "invalid_fault_spec" || e.code === "token_too_weak"
        ? ExitCodes.usage
        : e.code === "unsafe_directory"
          ? ExitCodes.storeUnusable
          : ExitCodes.failure;
    return { lines: [`sbx: ${clean(e.message)}`], exit };
  }
  // A bug: never an exit code a command could have given. The stack only when asked for.
  const lines = [`sbx: internal error (a bug in sbx): ${clean(e?.message ?? String(err))}`];
  if (opts.verbose && e?.stack) lines.push(...clean(e.stack).split("\n"));
  else lines.push("hint: run it again with --verbose for the details, and report them");
  return { lines, exit: ExitCodes.internal };
}

export async function main(
  argv: string[],
  io: IO = createProcessIO(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const controller = new AbortController();
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
    exitCode: 0,
  };
  const program = buildProgram(rt);
  // Commander copies these settings only to commands created later: set them on all.
  const configure = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (s) => io.writeOut(s),
      writeErr: (s) => io.writeErr(s),
      outputError: (s, write) => write(s.startsWith("error:") ? `sbx: ${s.slice("error: ".length)}` : s),
    });
    cmd.commands.forEach(configure);
  };
  configure(program);
  try {
    await program.parseAsync(argv, { from: "user" });
    return rt.exitCode;
  } catch (err) {
    if (err instanceof ExitWith) return err.exitCode;
    if (err instanceof CommanderError) {
      if (["commander.helpDisplayed", "commander.version", "commander.help"].includes(err.code)) return 0;
      if (err.code === "commander.unknownOption" && argv.includes("exec") && !argv.includes("--")) {
        io.err("hint: put the command after --, e.g. sbx exec -- ls -la");
      }
      return ExitCodes.usage;
    }
    const { lines, exit } = describeError(err, env, { verbose: argv.includes("--verbose") });
    for (const l of lines) io.err(l);
    return exit;
  } finally {
    process.removeListener("SIGINT", onSigint);
    process.removeListener("SIGTERM", onSigterm);
  }
}
