// sbx config get [KEY]: a setting, or all of them.

import { SETTINGS } from "../../../config/config.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { UsageError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";

export function checkKey(key: string): string {
  if (!(key in SETTINGS)) {
    throw new UsageError(`unknown setting ${JSON.stringify(key)}`, `settings: ${Object.keys(SETTINGS).join(", ")}`);
  }
  return key;
}

export async function runGet(opts: { key: string | undefined; json: boolean }, ctx: Context): Promise<number> {
  const settings = ctx.config.read().settings;
  if (opts.key === undefined) {
    // Every known setting, null when unset: a fixed set of keys, whatever the file holds.
    if (opts.json) printJson(ctx, Object.fromEntries(Object.keys(SETTINGS).map((k) => [k, settings[k] ?? null])));
    else for (const k of Object.keys(SETTINGS)) ctx.io.out(`${k}\t${settings[k] ?? ""}`);
    return ExitCodes.ok;
  }
  const value = settings[checkKey(opts.key)];
  if (opts.json) printJson(ctx, { [opts.key]: value ?? null });
  else if (value !== undefined) ctx.io.out(value);
  if (value === undefined && !opts.json) {
    // Unset: nothing on stdout, and a lookup that found nothing is sbx's own refusal, not a command's 1.
    ctx.io.err(`sbx: ${opts.key} is not set`);
    return ExitCodes.usage;
  }
  return ExitCodes.ok;
}

/** Bound to `sbx config get` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => runGet({ key: c.args[0], json: c.optsWithGlobals().json === true }, ctx);
