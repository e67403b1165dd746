// sbx shell: an interactive shell in a sandbox's /workspace on a terminal of the
// sandbox's own — bash where the sandbox has it, else sh — recorded as any execution
// (sbx exec -it with the shell as its command; see exec-terminal.ts).

import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { chooseSandbox, envFromFlags, idempotencyKeyFromFlag, workingDirFromFlag } from "../command-flags.js";
import { durationOption } from "../duration.js";
import { wholeSandboxRef } from "../id-prefix.js";
import { TIMEOUT_MIN_MS, TTY_TIMEOUT_MAX_MS } from "../../protocol/types.js";
import { detachKeysOption, type ExecOptions } from "./exec.js";

/** bash where the sandbox has it, else sh. */
export const SHELL_COMMAND = "if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi";

interface RawShellFlags {
  sandbox?: string;
  cwd?: string;
  env?: string[];
  timeout?: string;
  detachKeys?: string;
  idempotencyKey?: string;
}

export function parseShellOptions(
  raw: RawShellFlags,
  defaults: { sandbox?: string; detachKeys?: string },
): ExecOptions {
  const sandbox = chooseSandbox(raw.sandbox, defaults.sandbox);
  workingDirFromFlag(raw.cwd);
  const timeoutMs = durationOption("--timeout", raw.timeout ?? "24h", { min: TIMEOUT_MIN_MS, max: TTY_TIMEOUT_MAX_MS });
  return {
    argv: [],
    shell: SHELL_COMMAND,
    sandbox,
    timeoutMs,
    clientTimeoutMs: 60_000,
    cwd: raw.cwd,
    env: envFromFlags(raw.env, undefined),
    sendStdin: false,
    idempotencyKey: idempotencyKeyFromFlag(raw.idempotencyKey),
    stream: false,
    detach: false,
    json: false,
    tty: true,
    detachKeys: detachKeysOption(raw.detachKeys ?? defaults.detachKeys),
    failOnTruncated: false,
  };
}

export async function run(opts: ExecOptions, ctx: Context): Promise<number> {
  const { runOnTerminal } = await import("./exec-terminal.js");
  return runOnTerminal(opts, ctx);
}

/** Bound to `sbx shell` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const settings = ctx.config.read().settings;
  const opts = parseShellOptions(c.optsWithGlobals() as RawShellFlags, {
    ...(settings.sandbox === undefined ? {} : { sandbox: settings.sandbox }),
    ...(settings.detach_keys === undefined ? {} : { detachKeys: settings.detach_keys }),
  });
  return run({ ...opts, sandbox: await wholeSandboxRef(ctx, opts.sandbox) }, ctx);
};
