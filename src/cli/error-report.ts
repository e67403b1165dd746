// How an error is told: the lines on stderr and the exit code (src/common/exit-codes.ts).
// Loaded by main only when a command fails, so that a command that succeeds never
// pays for it.

import { redactSecrets } from "../client/redact.js";
import { ConfigStore } from "../config/config.js";
import { resolvePaths } from "../config/paths.js";
import { ExitCodes } from "../common/exit-codes.js";
import { LocalStateError, SbxError } from "../common/errors.js";
import { knownSecrets } from "./secrets.js";

/** The one place an error becomes lines on stderr and an exit code (src/common/exit-codes.ts). */
export function describeError(
  err: unknown,
  env: NodeJS.ProcessEnv,
  opts: { verbose?: boolean } = {},
): { lines: string[]; exit: number } {
  const secrets = knownSecrets(env, configFor(env));
  const clean = (s: string) => redactSecrets(s, secrets);
  if (err instanceof SbxError) {
    // Local state fails before a request leaves (after sending, dispatch keeps the answer in memory).
    const headline = err instanceof LocalStateError ? `${err.message}; nothing was sent` : err.message;
    const lines = [`sbx: ${clean(headline)}`];
    if (err.hint) lines.push(`hint: ${clean(err.hint)}`);
    return { lines, exit: err.exitCode };
  }
  // A bug: never an exit code a command could have given. The stack only when asked for.
  const e = err as Error | undefined;
  const lines = [`sbx: internal error (a bug in sbx): ${clean(e?.message ?? String(err))}`];
  if (opts.verbose && e?.stack) lines.push(...clean(e.stack).split("\n"));
  else lines.push("hint: run it again with --verbose for the details, and report them");
  return { lines, exit: ExitCodes.internal };
}

/** The config whose keys are hidden from what is shown; null when its directory is itself refused. */
function configFor(env: NodeJS.ProcessEnv): ConfigStore | null {
  try {
    return new ConfigStore(resolvePaths(env));
  } catch {
    return null;
  }
}
