// Ctrl-C during `sbx exec`: the first one asks the backend to cancel that execution
// (by its id, or found by its idempotency key when no id came back yet) and sbx
// keeps waiting for the outcome, which then says `cancelled` (exit 130). The second
// one stops waiting (main aborts ctx.interrupt): the receipt stays in doubt (255).

import { setTimeout as sleep } from "node:timers/promises";
import type { Api } from "../client/api.js";
import { idForKey } from "../client/key-lookup.js";
import { randomUUID } from "../platform/random.js";
import type { Context } from "./context.js";

/** Key lookups while the request may still be being admitted, a quarter second apart. */
const KEY_LOOKUPS = 20;

export interface InterruptTarget {
  sandbox: string;
  key: string;
  receiptId: string;
  /** The execution id, once the answer or the stream named it. */
  executionId: () => string | null;
}

/** How long an answer that is already in waits for a cancel on its way to say what it got. */
const ACK_GRACE_MS = 2_000;

/**
 * Takes the first Ctrl-C for cancelling the target; returns the undo, to call once the
 * answer is in. The undo lets a cancel already sent report first (for up to two seconds,
 * or until a second Ctrl-C), so the lines come in the order things happened: cancelling,
 * cancel requested, then the outcome.
 */
export function cancelOnFirstInterrupt(ctx: Context, api: Api, target: InterruptTarget): () => Promise<void> {
  let done = false;
  const say = (line: string) => {
    if (!done && !ctx.interrupt.aborted) ctx.io.err(line);
  };
  const findId = async (): Promise<string | null> => {
    for (let i = 0; i < KEY_LOOKUPS && !done && !ctx.interrupt.aborted; i++) {
      const known = target.executionId();
      if (known !== null) return known;
      const found = idForKey(await api.findExecutionByKey(target.sandbox, target.key, 5_000), "executions", target.key);
      if (found !== null) return found;
      await sleep(250, undefined, { signal: ctx.interrupt }).catch(() => undefined);
    }
    return target.executionId();
  };
  const cancel = async () => {
    say(`sbx: Ctrl-C: cancelling ${target.receiptId}… (Ctrl-C again stops waiting; the command may then keep running)`);
    const executionId = await findId();
    if (executionId === null) {
      say(`sbx: the backend has no execution for ${target.receiptId} yet; still waiting for its answer`);
      return;
    }
    // Learned by key: the receipt keeps it, so that whatever comes next can follow it by id.
    void ctx.storeWrite((s) => s.noteExecutionId(target.receiptId, executionId)).catch(() => undefined);
    try {
      const ack = await api.cancelExecution(
        target.sandbox,
        executionId,
        "Ctrl-C in sbx exec",
        `sbx-cancel-${randomUUID()}`,
      );
      say(
        ack.cancel === "requested"
          ? `sbx: cancel requested for ${executionId}; waiting for it to end…`
          : `sbx: ${executionId} had already ended`,
      );
    } catch (err) {
      say(`sbx: could not ask for the cancel of ${executionId} (${(err as Error).message}); still waiting`);
    }
  };
  let sending: Promise<void> | null = null;
  const undo = ctx.onFirstInterrupt(() => {
    sending = cancel();
  });
  return async () => {
    undo();
    if (sending !== null && !ctx.interrupt.aborted) {
      const grace = new AbortController();
      const stop = () => grace.abort();
      ctx.interrupt.addEventListener("abort", stop, { once: true });
      await Promise.race([sending, sleep(ACK_GRACE_MS, undefined, { signal: grace.signal }).catch(() => undefined)]);
      grace.abort();
      ctx.interrupt.removeEventListener("abort", stop);
    }
    done = true;
  };
}
