// What sbx says and exits with when an attached terminal session ends (sbx shell, exec
// -it, attach): the program's exit as `exec` maps it (docs/classification.md), the
// receipt observed once more so that it records the end; a detach or a takeover exits
// 0 and says how to come back; a dropped connection is in doubt (255) and says where to
// look; a signal to sbx exits 128+N. The program keeps running in every case but its exit.

import type { Api } from "../client/api.js";
import type { TerminalExit } from "../client/terminal.js";
import { describeDetachKeys } from "../common/detach-keys.js";
import { ExitCodes } from "../common/exit-codes.js";
import type { Classification } from "../receipts/classifications.js";
import { exitCodeFor, signalNumber } from "../receipts/classify.js";
import { receiptDocument } from "../receipts/document.js";
import type { Context } from "./context.js";
import { observeOnce } from "./observe.js";
import { printDispatchOutcome } from "./render/outcome.js";
import type { SessionEnd } from "./terminal-session.js";

export interface SessionRefs {
  api: Api;
  /** What was attached to: an execution id, or a process id. */
  executionId: string;
  /** The receipt of the execution, when this machine has it (a process's is not observed here). */
  receiptId: string | null;
  /** How to attach again (default: sbx attach ID). */
  attachAgain?: string;
}

/** How to detach, said once attached (on stderr, before raw mode). */
export function attachedLine(executionId: string, detachKeys: Buffer): string {
  return detachKeys.length === 0
    ? `sbx: attached to ${executionId}`
    : `sbx: attached to ${executionId}; detach with ${describeDetachKeys(detachKeys)}`;
}

export async function finishSession(ctx: Context, end: SessionEnd, refs: SessionRefs): Promise<number> {
  const { executionId, receiptId } = refs;
  const again = refs.attachAgain ?? `sbx attach ${executionId}`;
  const back = `${again}${receiptId === null ? "" : `; its result: sbx receipts wait ${receiptId}`}`;
  switch (end.kind) {
    case "exit":
      return exitOf(ctx, end.exit, refs);
    case "detached":
      ctx.io.info(`\nsbx: detached from ${executionId}; it keeps running. Come back: ${back}`);
      return ExitCodes.ok;
    case "taken_over":
      ctx.io.info(`\nsbx: ${end.reason}; ${executionId} keeps running there. Come back: ${back}`);
      return ExitCodes.ok;
    case "dropped":
      ctx.io.err(
        `\nsbx: the connection to the backend ended (${end.reason}); ${executionId} may still be running: ${back}`,
      );
      return ExitCodes.inDoubt;
    case "signal": {
      ctx.io.err(`\nsbx: ${end.signal}: detached from ${executionId}; it keeps running. Come back: ${back}`);
      const n = signalNumber(end.signal);
      return n === null ? ExitCodes.inDoubt : 128 + n;
    }
  }
}

const CLASSIFICATION_OF: Record<string, Classification> = {
  succeeded: "succeeded",
  failed: "failed",
  timed_out: "timed_out",
  cancelled: "cancelled",
};

/** The program ended: the receipt (if any) observes it; the exit code is `exec`'s for it. */
async function exitOf(ctx: Context, exit: TerminalExit, refs: SessionRefs): Promise<number> {
  if (refs.receiptId !== null) {
    try {
      const store = await ctx.receipts();
      await observeOnce(ctx, refs.api, store.get(refs.receiptId), "wait", 0);
      const doc = receiptDocument(store.get(refs.receiptId));
      if (doc.classification !== "running") return printDispatchOutcome(ctx, doc, false, { outputShown: true });
    } catch (err) {
      ctx.io.err(`sbx: could not record the end in ${refs.receiptId} (${(err as Error).message})`);
    }
  }
  const classification = CLASSIFICATION_OF[exit.outcome] ?? "outcome_unknown";
  if (classification === "outcome_unknown") {
    ctx.io.err(`sbx: ${refs.executionId} ended with outcome ${exit.outcome} (${exit.system_error ?? "no reason"})`);
  }
  return exitCodeFor({ classification, exit_code: exit.exit_code, signal: exit.signal });
}
