// Naming an execution on the command line: a receipt (id, execution id, key, or a
// unique prefix) or a bare execution id, or a unique prefix of one the backend has. A receipt brings its own backend and
// sandbox: observations go where the request was sent, whatever the current profile.

import type { Api } from "../client/api.js";
import { idForKey } from "../client/key-lookup.js";
import { ReceiptNotFound } from "../receipts/errors.js";
import type { StoredReceipt } from "../receipts/store.js";
import type { Context } from "./context.js";
import { endpointOfReceipt } from "./dispatch.js";
import { NotFoundError, UsageError } from "../common/errors.js";
import { isWholeId } from "../common/ids.js";
import { pickByPrefix, sandboxIdFor } from "./id-prefix.js";

export interface ExecutionTarget {
  api: Api;
  sandbox: string;
  executionId: string;
  receipt: StoredReceipt | null;
}

export async function resolveExecution(
  ctx: Context,
  ref: string,
  sandboxFlag: string | undefined,
): Promise<ExecutionTarget> {
  const store = await ctx.receipts();
  let receipt: StoredReceipt | null = null;
  try {
    receipt = store.get(store.resolve(ref));
  } catch (err) {
    if (!(err instanceof ReceiptNotFound)) throw err;
  }
  if (receipt) {
    const api = await ctx.api(endpointOfReceipt(ctx, receipt));
    const r = receipt.receipt;
    let executionId = r.execution_id;
    if (executionId === null) {
      executionId = idForKey(
        await api.findExecutionByKey(r.sandbox_id, r.idempotency_key, 15_000),
        "executions",
        r.idempotency_key,
      );
    }
    if (executionId === null) {
      throw new NotFoundError(
        `receipt ${r.receipt_id} has no execution on the backend (yet)`,
        `sbx receipts show ${r.receipt_id}`,
      );
    }
    return { api, sandbox: r.sandbox_id, executionId, receipt };
  }
  if (!ref.startsWith("exe_")) {
    throw new UsageError(`no receipt matches ${JSON.stringify(ref)}, and it is not an execution id (exe_…)`);
  }
  const api = await ctx.api();
  const sandbox = await sandboxIdFor(ctx, sandboxFlag);
  if (isWholeId(ref)) return { api, sandbox, executionId: ref, receipt: null };
  // A prefix of an execution no receipt here knows (one started elsewhere): the backend's.
  const executionId = pickByPrefix(
    ref,
    await api.executionIdsStartingWith(sandbox, ref),
    "executions",
    () =>
      new NotFoundError(
        `no receipt and no execution in sandbox ${sandbox} matches ${JSON.stringify(ref)}`,
        `see \`sbx receipts list\`; an execution of another sandbox needs -s SANDBOX`,
        "execution_not_found",
      ),
  );
  return { api, sandbox, executionId, receipt: null };
}
