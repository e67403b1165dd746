// sbx exec -it (and sbx shell): the execution is sent as any other — its receipt, with
// the Idempotency-Key and the exact body, committed first; sent once — asking for a
// terminal of the sandbox's own (`tty` with this terminal's size). Once it started,
// this terminal is attached to it from the transcript's first byte (nothing it printed
// before is lost) until it ends or the user detaches; then sbx exits as `exec` would.

import { BackendError, UsageError } from "../../common/errors.js";
import { routePath } from "../../protocol/routes.js";
import type { Context } from "../context.js";
import { dispatchNew } from "../dispatch.js";
import { printDispatchOutcome } from "../render/outcome.js";
import { answerNotRecorded } from "../render/outcome.js";
import { attachedLine, finishSession } from "../terminal-end.js";
import { relayTerminal, type SessionEnd } from "../terminal-session.js";
import { type ExecOptions, executeBody } from "./exec.js";

/** What docker says to -t without a terminal on stdin. */
export const NOT_A_TTY = "the input device is not a TTY";

export async function runOnTerminal(opts: ExecOptions, ctx: Context): Promise<number> {
  const local = ctx.io.localTerminal();
  if (local === null) {
    throw new UsageError(
      `${NOT_A_TTY}: -t attaches your terminal, and stdin is not one`,
      "drop -t (sbx exec -i sends stdin to the command instead)",
    );
  }
  const endpoint = ctx.endpoint();
  const api = await ctx.api(endpoint);
  const body = executeBody(opts, null, local.size());
  const outcome = await dispatchNew(
    ctx,
    endpoint,
    api,
    { kind: "execute", sandbox: opts.sandbox, body, key: opts.idempotencyKey, clientTimeoutMs: opts.clientTimeoutMs },
    {
      detach: true,
      beforeSend: (receiptId) => ctx.io.verbose(`sbx: receipt ${receiptId} committed; key ${opts.idempotencyKey}`),
    },
  );
  const doc = outcome.document;
  if (outcome.unrecorded) throw answerNotRecorded(ctx, outcome.unrecorded, doc, false);
  if (doc.classification !== "running" || doc.execution_id === null) {
    // Refused (a sandbox without terminals: 422), not started, or in doubt: said as exec says it.
    return printDispatchOutcome(ctx, doc, false);
  }
  const executionId = doc.execution_id;
  let end: SessionEnd;
  try {
    end = await relayTerminal(ctx, endpoint, {
      path: routePath("executions.terminal", { id: opts.sandbox, eid: executionId }, { offset: "0" }),
      detachKeys: opts.detachKeys,
      onAttached: () => ctx.io.verbose(attachedLine(executionId, opts.detachKeys)),
    });
  } catch (err) {
    // It started: a backend that cannot be reached now leaves it as a dropped connection
    // does (it may still run: 255), never "nothing ran" (75, safe to send again).
    if (!(err instanceof BackendError) || err.status !== null) throw err;
    end = { kind: "dropped", reason: err.message };
  }
  return finishSession(ctx, end, { api, executionId, receiptId: doc.receipt_id });
}
