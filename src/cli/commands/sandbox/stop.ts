// sbx sandbox stop: end a sandbox's environment and everything in it.

import { randomUUID } from "../../../platform/random.js";
import type { SandboxStopped } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { checkSandboxRef } from "../../command-flags.js";
import { printJson } from "../../render/outcome.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { confirmSelected, forEachSandbox, matchingSandboxes, refOrSelector } from "./labels.js";

export async function run(opts: { ref: string; json: boolean }, ctx: Context): Promise<number> {
  const progress = ctx.io.progress(`stopping ${opts.ref}: ending what runs in it…`);
  let stopped: SandboxStopped;
  try {
    stopped = await (await ctx.api()).stopSandbox(opts.ref, `sbx-${randomUUID()}`);
  } finally {
    progress.stop();
  }
  if (opts.json) printJson(ctx, stopped);
  else ctx.io.info(`sbx: ${describeStop(stopped)}`);
  return ExitCodes.ok;
}

/** `--label`: stops every sandbox the selector matches, saying what each ended. */
export async function runSelected(opts: { selector: string; yes: boolean; json: boolean }, ctx: Context) {
  const matched = await matchingSandboxes(ctx, opts.selector);
  await confirmSelected(ctx, "stop", opts.selector, matched, opts.yes);
  const api = await ctx.api();
  const all: SandboxStopped[] = [];
  const code = await forEachSandbox(ctx, matched, async (s) => {
    const stopped = await api.stopSandbox(s.name, `sbx-${randomUUID()}`);
    all.push(stopped);
    if (!opts.json) ctx.io.info(`sbx: ${describeStop(stopped)}`);
  });
  if (opts.json) printJson(ctx, { stopped: all });
  return code;
}

/** One line: what stopping the sandbox ended. */
export function describeStop(s: SandboxStopped): string {
  if (!s.was_running && s.ended.executions + s.ended.processes + s.ended.jobs === 0) {
    return `sandbox ${s.name} was not running; nothing to stop`;
  }
  const parts = [
    count(s.ended.executions, "execution", "cancelled"),
    count(s.ended.processes, "process", "stopped", "processes"),
    count(s.ended.jobs, "job", "cancelled"),
    s.ended.other.length === 0
      ? null
      : `${s.ended.other.length} other process(es) killed (${s.ended.other.join(", ")})`,
  ].filter((p) => p !== null);
  const what = parts.length === 0 ? "nothing was running in it" : parts.join(", ");
  return `stopped sandbox ${s.name}: ${what}; its workspace is kept, the next command starts it again`;
}

function count(n: number, one: string, done: string, many = `${one}s`): string | null {
  return n === 0 ? null : `${n} ${n === 1 ? one : many} ${done}`;
}

/** Bound to `sbx sandbox stop` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals() as { label?: string[]; yes?: boolean; json?: boolean };
  const chosen = refOrSelector(c.args[0], o.label, "stop");
  const json = o.json === true;
  if (chosen.selector !== undefined) return runSelected({ selector: chosen.selector, yes: o.yes === true, json }, ctx);
  return run({ ref: checkSandboxRef(chosen.ref), json }, ctx);
};
