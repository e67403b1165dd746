// GET /api/v1/health, GET /api/v1/openapi.json (the contract, built from the route
// table and the wire schemas) and GET /api/v1/storage (sbx): what the backend keeps.

import { openApiText } from "../../../protocol/openapi/document.js";
import { type Health, PROTOCOL_VERSION } from "../../../protocol/types.js";
import { VERSION } from "../../../version.js";
import type { RequestContext } from "../context.js";
import { jsonReply, type Reply } from "../replies.js";

export async function health(ctx: RequestContext): Promise<Reply> {
  const body: Health = {
    ok: true,
    version: VERSION,
    protocol: PROTOCOL_VERSION,
    backend: "local",
    started_at: ctx.services.startedAt,
    boot: ctx.services.runs.boot,
    isolation: ctx.services.drivers.status(),
    limits: ctx.services.drivers.limits.status(),
  };
  return jsonReply(200, body);
}

export async function storage(ctx: RequestContext): Promise<Reply> {
  return jsonReply(200, ctx.services.retention.report());
}

export async function openapi(): Promise<Reply> {
  return { kind: "text", status: 200, contentType: "application/json", body: openApiText() };
}
