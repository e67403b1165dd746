// sbx sandbox pause / resume: freeze every process of a sandbox, and thaw them
// (docs/operations.md, "Pause and resume"). One module for the pair: the same call,
// the same answer, said the same way.

import { randomUUID } from "../../../platform/random.js";
import type { Sandbox, SandboxDetails } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { checkSandboxRef } from "../../command-flags.js";
import { printJson } from "../../render/outcome.js";
import { sandboxDetailsDocument } from "./render.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(
  opts: { ref: string; json: boolean; verb: "pause" | "resume" },
  ctx: Context,
): Promise<number> {
  const api = await ctx.api();
  const key = `sbx-${randomUUID()}`;
  const progress = ctx.io.progress(`${opts.verb === "pause" ? "pausing" : "resuming"} ${opts.ref}…`);
  let sandbox: Sandbox & Partial<SandboxDetails>;
  try {
    sandbox = opts.verb === "pause" ? await api.pauseSandbox(opts.ref, key) : await api.resumeSandbox(opts.ref, key);
  } finally {
    progress.stop();
  }
  if (opts.json) printJson(ctx, sandboxDetailsDocument(sandbox));
  else ctx.io.info(`sbx: ${describe(sandbox, opts.verb)}`);
  return ExitCodes.ok;
}

function describe(s: Sandbox & Partial<SandboxDetails>, verb: "pause" | "resume"): string {
  const state = s.environment?.state ?? null;
  const processes = s.environment?.processes ?? 0;
  if (verb === "pause") {
    return `paused sandbox ${s.name}: its ${processes} process(es) are frozen; sbx sandbox resume ${s.name} thaws them`;
  }
  if (state === "stopped" || state === null) return `sandbox ${s.name} is not running; nothing to resume`;
  return `sandbox ${s.name} is ${state}: its ${processes} process(es) go on where they stopped`;
}

/** Bound to `sbx sandbox pause` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run({ ref: checkSandboxRef(c.args[0]!), json: c.optsWithGlobals().json === true, verb: "pause" }, ctx);
