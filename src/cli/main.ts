// The entry point: builds the tree, runs one command, and is the one place that
// turns errors into exit codes.

import { type Command, CommanderError } from "commander";
import { redact } from "../client/redact.js";
import { AmbiguousReceipt, ReceiptNotFound } from "../receipts/errors.js";
import type { Runtime } from "./command.js";
import { ExitCodes, ExitWith, SbxError } from "./errors.js";
import { createProcessIO, type IO } from "./io/io.js";
import { buildProgram } from "./program.js";

function describeError(err: unknown, env: NodeJS.ProcessEnv): { lines: string[]; exit: number } {
  const key = env.SBX_API_KEY ?? null;
  const clean = (s: string) => redact(s, key);
  if (err instanceof SbxError) {
    const lines = [`sbx: ${clean(err.message)}`];
    if (err.hint) lines.push(`hint: ${clean(err.hint)}`);
    return { lines, exit: err.exitCode };
  }
  if (err instanceof ReceiptNotFound) {
    return { lines: [`sbx: ${err.message}`, "hint: see `sbx receipts list`"], exit: 1 };
  }
  if (err instanceof AmbiguousReceipt) {
    return { lines: [`sbx: ${err.message}`, "hint: give more characters of the id"], exit: 1 };
  }
  const e = err as Error & { code?: unknown };
  if (e?.name === "BackendError" && typeof e.code === "string") {
    // The embedded backend's own start-up errors (daemon_already_running, bad fault spec, …).
    return { lines: [`sbx: ${clean(e.message)}`], exit: e.code === "invalid_fault_spec" ? ExitCodes.usage : 1 };
  }
  return { lines: [`sbx: internal error: ${clean(e?.stack ?? String(err))}`], exit: 1 };
}

export async function main(
  argv: string[],
  io: IO = createProcessIO(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const rt: Runtime = { io, env, interrupt: controller.signal, exitCode: 0 };
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
    const { lines, exit } = describeError(err, env);
    for (const l of lines) io.err(l);
    return exit;
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  }
}
