// Sandbox routes: POST /sandbox/create, GET /sandboxes, GET and DELETE /sandbox/{id}.

import { ErrorCodes, type SandboxCreateRequest, type SandboxList } from "../../protocol/types.js";
import { checkSandboxCreateRequest } from "../../protocol/validate.js";
import type { RequestContext } from "../context.js";
import { ApiError, invalidRequest, jsonReply, parseJsonBody, type Reply } from "../http.js";
import { runFixedAnswerMutation } from "../idempotency.js";
import { toSandbox } from "../sandbox-registry.js";

export function createSandbox(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const body = parseJsonBody(ctx.body, {});
    const problem = checkSandboxCreateRequest(body);
    if (problem) throw invalidRequest(problem.field, problem.message);
    const row = ctx.services.sandboxes.create(body as SandboxCreateRequest);
    return jsonReply(201, toSandbox(row));
  });
}

export async function listSandboxes(ctx: RequestContext): Promise<Reply> {
  const body: SandboxList = { sandboxes: ctx.services.store.listSandboxes().map(toSandbox) };
  return jsonReply(200, body);
}

export async function getSandbox(ctx: RequestContext): Promise<Reply> {
  const row = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: true });
  return jsonReply(200, toSandbox(row));
}

/** Answers the sandbox as it was, with status "deleted". `default` is not created just to be deleted. */
export function deleteSandbox(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const row = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: false });
    const jobs = ctx.services.jobs.unfinishedIn(row.sandbox_id);
    if (jobs > 0) {
      throw new ApiError(
        409,
        ErrorCodes.sandboxBusy,
        `sandbox ${row.name} has ${jobs} job(s) not ended; cancel them first (sbx jobs cancel)`,
        { sandbox_id: row.sandbox_id, jobs },
      );
    }
    ctx.services.sandboxes.remove(row);
    return jsonReply(200, { ...toSandbox(row), status: "deleted" });
  });
}
