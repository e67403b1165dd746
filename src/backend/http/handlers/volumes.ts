// Volume routes (sbx; docs/operations.md, "Named volumes"): POST /volume/create,
// GET /volumes, GET and DELETE /volume/{volume}.

import type { VolumeCreateRequest, VolumeList } from "../../../protocol/types.js";
import { KNOWN_FIELDS } from "../../../protocol/validate.js";
import { volumeNameProblem } from "../../../protocol/volumes.js";
import type { RequestContext } from "../context.js";
import { runFixedAnswerMutation } from "../idempotency.js";
import { invalidRequest, jsonReply, parseJsonBody, type Reply } from "../replies.js";

export function createVolume(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const body = parseJsonBody(ctx.body, {}) as Partial<VolumeCreateRequest> & Record<string, unknown>;
    const extra = Object.keys(body).find((k) => !(KNOWN_FIELDS.VolumeCreateRequest as readonly string[]).includes(k));
    if (extra !== undefined) throw invalidRequest(extra, `unknown field ${extra}`);
    const problem = volumeNameProblem(body.name);
    if (problem !== null) throw invalidRequest("name", problem);
    const size = body.size_bytes ?? null;
    if (size !== null && !Number.isSafeInteger(size))
      throw invalidRequest("size_bytes", "size_bytes is a whole number");
    const { volumes } = ctx.services.sandboxes;
    return jsonReply(201, volumes.toVolume(volumes.create(body.name!, size), !ctx.overTcp));
  });
}

export async function listVolumes(ctx: RequestContext): Promise<Reply> {
  const { volumes } = ctx.services.sandboxes;
  const body: VolumeList = { volumes: volumes.records().map((r) => volumes.toVolume(r, !ctx.overTcp)) };
  return jsonReply(200, body);
}

export async function getVolume(ctx: RequestContext): Promise<Reply> {
  const { volumes } = ctx.services.sandboxes;
  return jsonReply(200, volumes.toVolume(volumes.get(ctx.params.volume!), !ctx.overTcp));
}

/** Removes a volume with its files; refused (409 volume_in_use) while a sandbox mounts it. */
export function deleteVolume(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const { volumes } = ctx.services.sandboxes;
    const record = volumes.remove(ctx.params.volume!);
    return jsonReply(200, { ...volumes.toVolume(record, false), used_by: [] });
  });
}
