// The receipt chain's bytes: what is hashed for each entry, and how entries link into
// the store-wide chain (docs/receipt-chain.md says the same for other tools). Pure:
// no database here; the store appends (chain-log.ts), the verifier recomputes (verify.ts).

import { sha256Hex } from "../platform/sha256.js";

/** Version 1 of the encoding below. A change to any of it is a new version, never an edit. */
export const CHAIN_VERSION = 1;

/**
 * What an entry is. `request`, `attempt`, `observation` and `execution_id` belong to a
 * receipt; `seal` covers, as one entry, everything a receipt held before the store had
 * a chain; `genesis` and `checkpoint` (a prune) belong to the store (receipt_id "").
 */
export type EntryType = "genesis" | "seal" | "request" | "attempt" | "observation" | "execution_id" | "checkpoint";

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * RFC 8785 (JCS) for the values entries hold: object keys sorted by UTF-16 code unit,
 * no whitespace, strings and numbers as ECMAScript's JSON.stringify writes them.
 */
export function canonicalJson(value: Json): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError("not a JSON number");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k]!)}`).join(",")}}`;
}

/** The columns of a receipt's row hashed as its `request` entry: what was decided before sending, never updated. */
export const REQUEST_FIELDS = [
  "api_url",
  "body_sha256",
  "created_at",
  "idempotency_key",
  "kind",
  "mcp_request_id",
  "mcp_tool",
  "method",
  "path",
  "profile",
  "sandbox_id",
] as const;

/** The columns of an `attempts` row hashed as an `attempt` entry. */
export const ATTEMPT_FIELDS = ["attempt", "body_sha256", "dispatched_at", "pid"] as const;

/**
 * The columns of an `observations` row hashed as an `observation` entry: every column
 * but `id` and `receipt_id` (an observation's place is its position in the chain, so a
 * swap of two rows, or of their ids, shows as a reordering).
 */
export const OBSERVATION_FIELDS = [
  "at",
  "attempt",
  "boot",
  "classification",
  "definitive",
  "egress_denied",
  "end_reason",
  "error_code",
  "error_message",
  "execution_id",
  "exit_code",
  "http_status",
  "image_digest",
  "job_id",
  "outcome",
  "process_id",
  "record_pending",
  "request_id",
  "retry_after_ms",
  "signal",
  "source",
  "stderr",
  "stderr_truncated",
  "stdout",
  "stdout_truncated",
  "system_error",
  "usage",
] as const;

/**
 * Columns added after the chain began: hashed only when not null, so that an entry
 * hashed before its column existed (where the column now reads null) keeps its link,
 * while setting, changing or clearing one later shows.
 */
export const LATER_FIELDS: ReadonlySet<string> = new Set([
  "boot",
  "egress_denied",
  "end_reason",
  "job_id",
  "image_digest",
  "mcp_request_id",
  "mcp_tool",
  "usage",
]);

/** One column's value as canonical JSON. A BLOB where text belongs is encoded so that it can never match. */
function valueText(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (typeof v === "bigint") return String(v);
  if (v instanceof Uint8Array) return JSON.stringify(`\u0000blob:${Buffer.from(v).toString("hex")}`);
  return JSON.stringify(String(v));
}

/**
 * A row read for verification may carry its data already encoded, by SQLite's
 * json_object (verify-store.ts), under this key (no column is named so).
 */
export const ENCODED_DATA = "$data";

/**
 * The canonical JSON of a row's named columns (the field lists above are in canonical
 * order): what canonicalJson would write for that object, without building it.
 */
export function rowData(row: Record<string, unknown>, fields: readonly string[]): string {
  const encoded = row[ENCODED_DATA];
  if (typeof encoded === "string") return encoded;
  let out = "{";
  let first = true;
  for (const f of fields) {
    const v = row[f];
    if ((v === null || v === undefined) && LATER_FIELDS.has(f)) continue;
    out += `${first ? "" : ","}"${f}":${valueText(v)}`;
    first = false;
  }
  return `${out}}`;
}

/** The data of a `seal`: all a receipt held before the chain began, as one entry. */
export function sealData(
  request: Record<string, unknown>,
  attempts: readonly Record<string, unknown>[],
  observations: readonly Record<string, unknown>[],
): string {
  return `{"attempts":[${attempts.map((a) => rowData(a, ATTEMPT_FIELDS)).join(",")}],"observations":[${observations
    .map((o) => rowData(o, OBSERVATION_FIELDS))
    .join(",")}],"request":${rowData(request, REQUEST_FIELDS)}}`;
}

/**
 * The entry as hashed: canonical JSON of
 * {"data": DATA, "prev": link of the receipt's previous entry or null, "receipt_id", "type", "v": 1}.
 * `data` is canonical JSON already (rowData, sealData, canonicalJson).
 */
export function envelope(type: EntryType, receiptId: string, prevLink: string | null, data: string): string {
  return `{"data":${data},"prev":${prevLink === null ? "null" : `"${prevLink}"`},"receipt_id":${JSON.stringify(
    receiptId,
  )},"type":"${type}","v":${CHAIN_VERSION}}`;
}

/** The link before the first position. */
export const ZERO_LINK = "0".repeat(64);

/**
 * The link at a position: lowercase hex SHA-256 of the UTF-8 bytes of the previous
 * position's link (64 hex characters) followed by this entry's envelope.
 */
export function chainLink(prevLink: string, entry: string): string {
  return sha256Hex(prevLink + entry);
}
