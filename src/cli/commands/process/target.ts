// Naming a process: its id (prc_…) or a unique prefix of one (its short form,
// prc_9qm3x7ta), its name in the sandbox, or the receipt of its start.

import { ProcessesApi } from "../../../client/processes.js";
import type { Handle } from "../../../protocol/types.js";
import { receiptBoot } from "../../../receipts/document.js";
import { ReceiptNotFound } from "../../../receipts/errors.js";
import type { Context } from "../../context.js";
import { endpointOfReceipt } from "../../dispatch.js";
import { NotFoundError, UsageError } from "../../../common/errors.js";
import { isWholeId } from "../../../common/ids.js";
import { pickByPrefix, sandboxIdFor } from "../../id-prefix.js";

export interface ProcessTarget {
  api: ProcessesApi;
  sandbox: string;
  processId: string;
  /** The backend boot its start receipt keeps, when it was found through one (null otherwise). */
  boot: string | null;
}

/**
 * What a signal, stdin or stop names of the run it means (docs/protocol.md, "Ownership
 * fences"): the run when one was named (it alone tells runs apart, across boots too),
 * else the boot its receipt kept, else nothing: the current run.
 */
export function handleOf(t: ProcessTarget, run: number | undefined): Handle {
  if (run !== undefined) return { run };
  return t.boot === null ? {} : { boot: t.boot };
}

/**
 * The run a request is meant for (docs/protocol.md, "Ownership fences"): `prc_…@3` (or
 * `web@3`) and `--run 3` name run 3; the backend refuses the request with 409
 * stale_handle, doing nothing, while another run is current. Neither: the current run.
 */
export function splitRun(ref: string, runFlag: string | undefined): { ref: string; run: number | undefined } {
  const at = /^(.+)@([0-9]+)$/.exec(ref);
  const fromRef = at ? Number(at[2]) : undefined;
  let fromFlag: number | undefined;
  if (runFlag !== undefined) {
    if (!/^[0-9]{1,15}$/.test(runFlag)) throw new UsageError(`--run ${runFlag}: a run number (0, 1, 2, …)`);
    fromFlag = Number(runFlag);
  }
  if (fromRef !== undefined && fromFlag !== undefined && fromRef !== fromFlag) {
    throw new UsageError(`${ref} and --run ${runFlag} name two different runs`);
  }
  return { ref: at ? at[1]! : ref, run: fromRef ?? fromFlag };
}

export async function processesApi(ctx: Context): Promise<ProcessesApi> {
  return new ProcessesApi((await ctx.api()).http);
}

export async function resolveProcess(
  ctx: Context,
  ref: string,
  sandboxFlag: string | undefined,
): Promise<ProcessTarget> {
  if (ref.startsWith("prc_") && isWholeId(ref) && sandboxFlag !== undefined) {
    return { api: await processesApi(ctx), sandbox: await sandboxIdFor(ctx, sandboxFlag), processId: ref, boot: null };
  }
  // A process id without -s: its start receipt knows the sandbox (and the backend), so
  // the id `sbx process start -s web` printed works as it was printed.
  if (ref.startsWith("rcp_") || ref.startsWith("prc_")) {
    const store = await ctx.receipts();
    try {
      const stored = store.get(store.resolve(ref));
      if (stored.receipt.kind === "process_start" && stored.receipt.process_id) {
        const api = new ProcessesApi((await ctx.api(endpointOfReceipt(ctx, stored))).http);
        return {
          api,
          sandbox: stored.receipt.sandbox_id,
          processId: stored.receipt.process_id,
          boot: receiptBoot(stored.observations),
        };
      }
    } catch (err) {
      if (!(err instanceof ReceiptNotFound)) throw err;
    }
  }
  const api = await processesApi(ctx);
  const sandbox = await sandboxIdFor(ctx, sandboxFlag);
  if (ref.startsWith("prc_") && isWholeId(ref)) return { api, sandbox, processId: ref, boot: null };
  const listed = await api.list(sandbox);
  const notFound = () =>
    new NotFoundError(
      `no process ${JSON.stringify(ref)} in sandbox ${sandbox}`,
      `see \`sbx process list -s ${sandbox}\`; a process of another sandbox needs -s SANDBOX`,
    );
  if (ref.startsWith("prc_")) {
    const ids = listed.map((p) => p.process_id);
    return { api, sandbox, processId: pickByPrefix(ref, ids, "processes", notFound), boot: null };
  }
  const named = listed.filter((p) => p.name === ref);
  // A name is one process's until it exits (409 process_name_in_use): the one that has
  // not exited answers to it, else the newest (the list is oldest first).
  const live = named.filter((p) => p.state !== "exited");
  if (named.length > 0 && live.length <= 1) {
    return { api, sandbox, processId: (live[0] ?? named[named.length - 1]!).process_id, boot: null };
  }
  if (named.length > 1) {
    throw new UsageError(
      `${named.length} processes are named ${JSON.stringify(ref)}: ${named.map((p) => p.process_id).join(", ")}`,
    );
  }
  throw notFound();
}
