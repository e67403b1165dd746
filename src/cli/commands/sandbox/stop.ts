// sbx sandbox stop: end a sandbox's environment and everything in it.

import { randomUUID } from "../../../platform/random.js";
import type { SandboxStopped } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { checkSandboxRef } from "../../command-flags.js";
import { printJson } from "../../render/outcome.js";
import { ExitCodes } from "../../../common/exit-codes.js";

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
export const action: RunFn = async (ctx, c) =>
  run({ ref: checkSandboxRef(c.args[0]!), json: c.optsWithGlobals().json === true }, ctx);
