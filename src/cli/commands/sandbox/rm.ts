import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { formatBytes } from "../../render/bytes.js";
import { checkSandboxRef } from "../../command-flags.js";
import { SbxError, UsageError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { JobsApi } from "../../../client/jobs.js";
import { ProcessesApi } from "../../../client/processes.js";
import { wholeSandboxRef } from "../../id-prefix.js";
import { confirmSelected, forEachSandbox, matchingSandboxes, refOrSelector } from "./labels.js";

/** What removing a sandbox loses with its workspace: its files and the records kept with it. */
export interface Losses {
  files: number;
  bytes: number;
  jobs: number;
  processes: number;
}

/** "12 files (3.4 MiB), 5 jobs and 2 processes with their logs". */
export function describeLosses(l: Losses): string {
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  const parts = [`${n(l.files, "file", "files")} (${formatBytes(l.bytes)})`];
  if (l.jobs > 0) parts.push(n(l.jobs, "job", "jobs"));
  if (l.processes > 0) parts.push(n(l.processes, "process", "processes"));
  const said = parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
  return l.jobs + l.processes > 0 ? `${said} with their logs` : said;
}

/**
 * What the sandbox's removal would lose, when its workspace holds files (else null:
 * nothing to ask about). A sandbox that does not exist is left to the removal to say.
 */
async function lossesOf(ctx: Context, ref: string): Promise<Losses | null> {
  const api = await ctx.api();
  const known = (await api.listSandboxes()).some((s) => s.name === ref || s.sandbox_id === ref);
  if (!known) return null;
  const details = await api.getSandbox(ref, { usage: true });
  const files = details.workspace_files;
  // A backend that does not count them: its size says whether anything is there.
  if (files === 0 || (files === undefined && !details.workspace_bytes)) return null;
  const [jobs, processes] = await Promise.all([new JobsApi(api.http).list(ref), new ProcessesApi(api.http).list(ref)]);
  return {
    files: files ?? 0,
    bytes: details.workspace_bytes ?? 0,
    jobs: jobs.jobs.length,
    processes: processes.length,
  };
}

/** Asks on a terminal before a workspace holding files goes; refuses off one without --force. */
async function confirmLosses(ctx: Context, ref: string, losses: Losses): Promise<void> {
  const lost = `removing sandbox ${ref} deletes its workspace: ${describeLosses(losses)}`;
  if (!ctx.io.canPrompt) {
    throw new UsageError(
      `${lost}; not removed without --force (no terminal to ask on)`,
      `sbx sandbox rm ${ref} --force`,
    );
  }
  const { confirm } = await import("@inquirer/prompts");
  ctx.io.err(`sbx: ${lost}`);
  let yes: boolean;
  try {
    yes = await confirm(
      { message: `Remove sandbox ${ref} and everything in it?`, default: false },
      { ...ctx.io.promptStreams(), signal: ctx.interrupt },
    );
  } catch (err) {
    // Inquirer's way of saying Ctrl-C was pressed (or sbx was interrupted).
    const name = (err as Error | null)?.name;
    if (name !== "ExitPromptError" && name !== "AbortPromptError") throw err;
    throw new SbxError("cancelled", `cancelled; sandbox ${ref} was not removed`, { exitCode: ExitCodes.cancelled });
  }
  if (!yes) {
    throw new SbxError("not_confirmed", `sandbox ${ref} was not removed`, {
      exitCode: ExitCodes.usage,
      hint: `sbx sandbox rm ${ref} --force removes it without asking`,
    });
  }
}

export async function run(opts: { ref: string; force: boolean; json: boolean }, ctx: Context): Promise<number> {
  if (!opts.force) {
    const losses = await lossesOf(ctx, opts.ref);
    if (losses !== null) await confirmLosses(ctx, opts.ref, losses);
  }
  const progress = opts.force ? ctx.io.progress(`ending what runs in ${opts.ref}, then removing it…`) : null;
  try {
    await (await ctx.api()).removeSandbox(opts.ref, { force: opts.force });
  } finally {
    progress?.stop();
  }
  if (opts.json) printJson(ctx, { removed: opts.ref });
  else ctx.io.info(`sbx: removed sandbox ${opts.ref} and its workspace`);
  return ExitCodes.ok;
}

/**
 * `--label`: removes every sandbox the selector matches, once asked (or --yes); one
 * still busy is refused and said unless --force, and the rest still go.
 */
export async function runSelected(
  opts: { selector: string; yes: boolean; force: boolean; json: boolean },
  ctx: Context,
) {
  const matched = await matchingSandboxes(ctx, opts.selector);
  await confirmSelected(ctx, "remove", opts.selector, matched, opts.yes);
  const api = await ctx.api();
  const removed: string[] = [];
  const code = await forEachSandbox(ctx, matched, async (s) => {
    await api.removeSandbox(s.name, { force: opts.force });
    removed.push(s.name);
    if (!opts.json) ctx.io.info(`sbx: removed sandbox ${s.name} and its workspace`);
  });
  if (opts.json) printJson(ctx, { removed });
  return code;
}

/** Bound to `sbx sandbox rm` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals() as { label?: string[]; yes?: boolean; force?: boolean; json?: boolean };
  const chosen = refOrSelector(c.args[0], o.label, "rm");
  const [force, json] = [o.force === true, o.json === true];
  if (chosen.selector !== undefined) {
    return runSelected({ selector: chosen.selector, yes: o.yes === true, force, json }, ctx);
  }
  return run({ ref: await wholeSandboxRef(ctx, checkSandboxRef(chosen.ref)), force, json }, ctx);
};
