// sbx process attach: this terminal to a supervised process started with --tty (the
// current run's terminal; across restarts the output goes on and keys go to the run
// that is current). The last client to attach has the terminal. From the transcript's
// end by default, or all of what is kept with --replay. When the process ends for good,
// sbx exits as `exec` would for its outcome; the detach keys leave it running.

import { routePath } from "../../../protocol/routes.js";
import { UsageError } from "../../../common/errors.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { attachedLine, finishSession } from "../../terminal-end.js";
import { relayTerminal } from "../../terminal-session.js";
import { detachKeysOption } from "../exec.js";
import { NOT_A_TTY } from "../exec-terminal.js";
import { resolveProcess } from "./target.js";

export interface ProcessAttachOptions {
  ref: string;
  sandbox: string | undefined;
  replay: boolean;
  detachKeys: Buffer;
}

export async function run(opts: ProcessAttachOptions, ctx: Context): Promise<number> {
  if (ctx.io.localTerminal() === null) {
    throw new UsageError(
      `${NOT_A_TTY}: sbx process attach attaches your terminal, and stdin is not one`,
      "read its output with sbx process logs PROCESS instead",
    );
  }
  const target = await resolveProcess(ctx, opts.ref, opts.sandbox);
  const api = await ctx.api();
  const again = `sbx process attach ${opts.ref}${opts.sandbox === undefined ? "" : ` -s ${opts.sandbox}`}`;
  const end = await relayTerminal(ctx, api.http.endpoint, {
    path: routePath(
      "process.terminal",
      { id: target.sandbox, pid: target.processId },
      opts.replay ? { offset: "0" } : {},
    ),
    detachKeys: opts.detachKeys,
    onAttached: () => {
      const line = attachedLine(target.processId, opts.detachKeys);
      ctx.io.info(line);
    },
    // The program is asked to redraw (a resize); with --replay the transcript draws it.
    redraw: !opts.replay,
  });
  return finishSession(ctx, end, { api, executionId: target.processId, receiptId: null, attachAgain: again });
}

/** Bound to `sbx process attach` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const settings = ctx.config.read().settings;
  const raw = c.optsWithGlobals() as { sandbox?: string; replay?: boolean; detachKeys?: string };
  return run(
    {
      ref: c.args[0]!,
      sandbox: raw.sandbox,
      replay: raw.replay === true,
      detachKeys: detachKeysOption(raw.detachKeys ?? settings.detach_keys),
    },
    ctx,
  );
};
