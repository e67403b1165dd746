// How an error is told: the lines on stderr and the exit code (src/exit-codes.ts).
// Loaded by main only when a command fails, so that a command that succeeds never
// pays for it.

import { redactSecrets } from "../client/redact.js";
import { ConfigStore } from "../config/config.js";
import { resolvePaths, UnsafeDirectory } from "../config/paths.js";
import { AmbiguousReceipt, ReceiptNotFound, ReceiptStoreBusy, ReceiptStoreUnusable } from "../receipts/errors.js";
import { ExitCodes, SbxError } from "./errors.js";
import { knownSecrets } from "./secrets.js";

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
