// Observations as the client records them (src/client/observed.ts), for the
// classifier's tests: an HTTP answer (JSON, a raw body, an execution record, a
// documented API error) or a transport failure.

import type { Observed } from "../../src/receipts/classify.js";
import { executionRecord } from "./misbehaving-server.js";

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Observed => ({
  kind: "answer",
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});
export const raw = (status: number, body: string, contentType = "text/plain"): Observed => ({
  kind: "answer",
  status,
  headers: { "content-type": contentType },
  body,
});
/** A 200 execution record (exe_1) with these fields. */
export const rec = (over: Record<string, unknown>) =>
  json(200, executionRecord(null, { execution_id: "exe_1", ...over }));
export const apiError = (
  status: number,
  code: string,
  details?: Record<string, unknown>,
  headers?: Record<string, string>,
) => json(status, { error: { code, message: `${code} happened`, ...(details ? { details } : {}) } }, headers);
export const transport = (code: string, sent: boolean): Observed => ({ kind: "transport", sent, code, message: code });
