// sbx attach: this terminal to an execution running on a terminal (started by sbx
// shell or exec -it, detached from, or whose connection dropped), by its execution id
// or its receipt. The last client to attach has the terminal; an earlier one is told.
// From the transcript's end by default (the program is asked to redraw: a resize, as
// tmux does on attach), or all of it with --replay. Only reads and types: nothing is started or sent again.

import { routePath } from "../../protocol/routes.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { resolveExecution } from "../execution-ref.js";
import { attachedLine, finishSession } from "../terminal-end.js";
import { relayTerminal } from "../terminal-session.js";
import { UsageError } from "../../common/errors.js";
import { detachKeysOption } from "./exec.js";
import { NOT_A_TTY } from "./exec-terminal.js";

export interface AttachOptions {
  ref: string;
  sandbox: string | undefined;
  replay: boolean;
  detachKeys: Buffer;
}

export function parseAttachOptions(
  ref: string,
  raw: { sandbox?: string; replay?: boolean; detachKeys?: string },
  defaults: { detachKeys?: string },
): AttachOptions {
  return {
    ref,
    sandbox: raw.sandbox,
    replay: raw.replay === true,
    detachKeys: detachKeysOption(raw.detachKeys ?? defaults.detachKeys),
  };
}

export async function run(opts: AttachOptions, ctx: Context): Promise<number> {
  if (ctx.io.localTerminal() === null) {
    throw new UsageError(
      `${NOT_A_TTY}: sbx attach attaches your terminal, and stdin is not one`,
      "read its output with sbx logs EXE instead",
    );
  }
  const target = await resolveExecution(ctx, opts.ref, opts.sandbox);
  const endpoint = target.api.http.endpoint;
  const query = opts.replay ? { offset: "0" } : {};
  const end = await relayTerminal(ctx, endpoint, {
    path: routePath("executions.terminal", { id: target.sandbox, eid: target.executionId }, query),
    detachKeys: opts.detachKeys,
    onAttached: () => {
      const line = attachedLine(target.executionId, opts.detachKeys);
      ctx.io.info(line);
    },
    // The program is asked to redraw (a resize); with --replay the transcript draws it.
    redraw: !opts.replay,
  });
  return finishSession(ctx, end, {
    api: target.api,
    executionId: target.executionId,
    receiptId: target.receipt?.receipt.receipt_id ?? null,
  });
}

/** Bound to `sbx attach` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const settings = ctx.config.read().settings;
  const opts = parseAttachOptions(c.args[0]!, c.optsWithGlobals(), {
    ...(settings.detach_keys === undefined ? {} : { detachKeys: settings.detach_keys }),
  });
  return run(opts, ctx);
};
