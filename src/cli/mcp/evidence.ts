// Receipts for the tool calls that change something without starting a command
// (docs/agents.md, "Retries"): a file written, bytes to a process's stdin, a signal, a
// stop, a cancel, a sandbox created or stopped. Each such request is a receipt of kind
// `request`, written before it is sent exactly as a start's (the method, the path, the
// exact body bytes, the key, the tool and the MCP request id), and the answer recorded
// on it: `succeeded` once the backend accepted it, `rejected`/`not_started` when nothing
// was done, in doubt when the answer was lost. Reads pass through untouched.

import { Type } from "@sinclair/typebox";
import type { Requests, SendRequest } from "../../client/http.js";
import type { HttpObserved } from "../../client/observed.js";
import { classifyObservation } from "../../receipts/classify.js";
import { receiptTag, type ToolCall, toolKey } from "./tool.js";

async function bytesOf(body: SendRequest["body"]): Promise<Buffer> {
  if (body === undefined) return Buffer.alloc(0);
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * `http` for one tool call whose every request but a GET is a receipt first (in
 * `sandbox`, the tool's own): its id is added to `call.receipts`. A request without a
 * key gets a fresh one, so the backend can replay it.
 */
export function receipted(call: ToolCall, sandbox: string, http: Requests): Requests {
  const send = async (req: SendRequest): Promise<HttpObserved> => {
    if (req.method === "GET") return http.send(req);
    const body = await bytesOf(req.body);
    const key = req.idempotencyKey ?? toolKey(call.tool, undefined);
    const row = await call.ctx.storeWrite((s) =>
      s.createForDispatch({
        kind: "request",
        profile: call.endpoint.profile,
        apiUrl: call.endpoint.apiUrl,
        sandbox,
        idempotencyKey: key,
        method: req.method,
        path: req.path,
        body,
        mcp: receiptTag(call),
      }),
    );
    call.receipts.push(row.receipt_id);
    let observed: HttpObserved;
    try {
      observed = await http.send({ ...req, body, idempotencyKey: key });
    } catch (err) {
      observed = {
        kind: "transport",
        sent: true,
        code: "client_error",
        message: (err as Error)?.message ?? String(err),
      };
    }
    const classified = classifyObservation(observed, "dispatch", "request");
    await call.ctx.storeWrite((s) => s.recordObservation(row.receipt_id, "answer", classified, { attempt: 1 }));
    return observed;
  };
  return {
    endpoint: http.endpoint,
    send,
    openStream: (req) => (req.method === "GET" ? http.openStream(req) : send(req)),
    openRaw: (req) => (req.method === "GET" ? http.openRaw(req) : send(req)),
    close: () => http.close(),
  };
}

/** The output field every tool that may change something carries. */
export const ReceiptIdsField = {
  receipt_ids: Type.Array(Type.String(), {
    description:
      "The receipts (rcp_…) of what this call sent that changes something, each written before it was sent: receipt_show shows one. Empty when it sent nothing.",
  }),
};

/** The tool error's last lines when the call wrote receipts: where to look before sending it again. */
export function receiptsText(call: ToolCall): string {
  if (call.receipts.length === 0) return "";
  const ids = call.receipts.join(", ");
  return `\nreceipts of this call: ${ids}. Before sending it again, call receipt_show {"receipt_id": "${call.receipts.at(-1)}"} to see whether the backend accepted it.`;
}
