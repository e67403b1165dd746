// sbx process stdin: send bytes to a process started with --stdin (binary-safe).

import fs from "node:fs";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { BackendError, UsageError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";
import { newKey } from "./mutation.js";
import { resolveProcess } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function runStdin(
  opts: { ref: string; sandbox: string | undefined; file: string | undefined; eof: boolean; json: boolean },
  ctx: Context,
): Promise<number> {
  let bytes: Buffer;
  if (opts.file !== undefined) {
    try {
      bytes = fs.readFileSync(opts.file);
    } catch (err) {
      throw new UsageError(`--file ${opts.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  } else {
    bytes = await ctx.io.readStdin();
  }
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  try {
    const a = await t.api.writeStdin(t.sandbox, t.processId, bytes, opts.eof, newKey());
    if (opts.json) printJson(ctx, a);
    else ctx.io.info(`sbx: wrote ${a.bytes_written} bytes to ${t.processId}${a.eof ? " and closed its stdin" : ""}`);
  } catch (err) {
    if (err instanceof BackendError && err.code === "stdin_not_enabled") {
      throw new UsageError(
        `${t.processId} was started without --stdin; its stdin is /dev/null`,
        "start it with sbx process start --stdin",
      );
    }
    throw err;
  }
  return ExitCodes.ok;
}

/** Bound to `sbx process stdin` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const o = c.optsWithGlobals() as { sandbox?: string; file?: string; eof?: boolean; json?: boolean };
  return runStdin(
    { ref: c.args[0]!, sandbox: o.sandbox, file: o.file, eof: o.eof === true, json: o.json === true },
    ctx,
  );
};
