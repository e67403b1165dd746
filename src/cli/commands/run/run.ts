// sbx run: create a sandbox, run one command in it as `sbx exec` does, remove the
// sandbox afterwards unless --keep (docs/images.md, "sbx run"). The create's refusal
// is the run's (nothing was made); the command's outcome is the run's exit code.

import { randomBytes } from "../../../platform/random.js";
import type { Sandbox } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { type ExecOptions, parseExecOptions, run as runExec } from "../exec.js";
import { type CreateOptions, createFromOptions, parseCreateOptions } from "../sandbox/create.js";
import { commandFromFlags } from "../../command-flags.js";

export interface RunOptions {
  create: CreateOptions & { name: string };
  exec: ExecOptions;
  keep: boolean;
}

type RawRunFlags = Parameters<typeof parseCreateOptions>[1] &
  Parameters<typeof parseExecOptions>[1] & { name?: string; keep?: boolean };

/** A name nobody chose: run- and 8 random letters and digits. */
export function runSandboxName(): string {
  const alphabet = "abcdefghijkmnopqrstuvwxyz23456789";
  return `run-${[...randomBytes(8)].map((b) => alphabet[b % alphabet.length]).join("")}`;
}

export function parseRunOptions(argv: string[], raw: RawRunFlags, defaults: { timeout?: string }): RunOptions {
  commandFromFlags(argv, raw.shell, "usage: sbx run [options] -- COMMAND [ARGS...]  or  sbx run --shell 'STRING'");
  const name = raw.name ?? runSandboxName();
  const create = { ...parseCreateOptions(name, { ...raw, json: false }), name };
  const exec = parseExecOptions(argv, { ...raw, sandbox: name, detach: false, tty: false }, defaults);
  return { create, exec, keep: raw.keep === true };
}

export async function run(opts: RunOptions, ctx: Context): Promise<number> {
  // Refused: nothing was created, and the create's own exit code (125, or 75 to retry) says so.
  const sandbox = await createFromOptions(opts.create, ctx);
  ctx.io.verbose(`sbx: created sandbox ${sandbox.name} (${sandbox.sandbox_id})${rootSaid(sandbox)}`);
  try {
    return await runExec({ ...opts.exec, sandbox: sandbox.name }, ctx);
  } finally {
    await (opts.keep ? sayKept(ctx, sandbox) : removeAfter(ctx, sandbox));
  }
}

function rootSaid(s: Sandbox): string {
  return s.image ? ` from image ${s.image.reference} ${s.image.digest}` : "";
}

function sayKept(ctx: Context, s: Sandbox): void {
  ctx.io.info(`sbx: kept sandbox ${s.name}${rootSaid(s)}; remove it with: sbx sandbox rm ${s.name} --force`);
}

/**
 * Removes the sandbox with what still runs in it (the command is over, or sbx was
 * interrupted: then it is ended with it). Its own signal, not the interrupt's: a
 * Ctrl-C that ended the command must not also leave the sandbox behind.
 */
async function removeAfter(ctx: Context, s: Sandbox): Promise<void> {
  const api = await ctx.api();
  try {
    await api.removeSandbox(s.name, { force: true, signal: AbortSignal.timeout(120_000) });
  } catch (err) {
    ctx.io.err(
      `sbx: sandbox ${s.name} could not be removed (${(err as Error).message}); remove it with: sbx sandbox rm ${s.name} --force`,
    );
    return;
  }
  const root = s.image ? ` and its root (a writable copy of ${s.image.reference})` : "";
  ctx.io.info(`sbx: removed sandbox ${s.name} (${s.sandbox_id}), its workspace${root}`);
}

/** Bound to `sbx run` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const settings = ctx.config.read().settings;
  return run(
    parseRunOptions(
      c.args,
      c.optsWithGlobals() as RawRunFlags,
      settings.timeout === undefined ? {} : { timeout: settings.timeout },
    ),
    ctx,
  );
};
