// sbx process stdin: send bytes to a process started with --stdin (binary-safe).

import fs from "node:fs";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { BackendError, UsageError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";
import { newKey } from "./mutation.js";
import { handleOf, resolveProcess, splitRun } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { fileErrorWords } from "../../../common/file-errors.js";

export async function runStdin(
  opts: {
    ref: string;
    sandbox: string | undefined;
    file: string | undefined;
    eof: boolean;
    /** The run it is meant for (prc_…@N or --run N); the current one when undefined. */
    run: string | undefined;
    json: boolean;
  },
  ctx: Context,
): Promise<number> {
  let bytes: Buffer;
  if (opts.file !== undefined) {
    try {
      bytes = fs.readFileSync(opts.file);
    } catch (err) {
      throw new UsageError(`--file ${opts.file}: ${fileErrorWords(err)}`);
    }
  } else {
    bytes = await ctx.io.readStdin();
  }
  const fenced = splitRun(opts.ref, opts.run);
  const t = await resolveProcess(ctx, fenced.ref, opts.sandbox);
  try {
    const a = await t.api.writeStdin(t.sandbox, t.processId, bytes, opts.eof, newKey(), handleOf(t, fenced.run));
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
  const o = c.optsWithGlobals() as { sandbox?: string; file?: string; eof?: boolean; run?: string; json?: boolean };
  return runStdin(
    { ref: c.args[0]!, sandbox: o.sandbox, file: o.file, eof: o.eof === true, run: o.run, json: o.json === true },
    ctx,
  );
};
