// A signed bundle of receipts (docs/receipt-bundle.md): the receipts, the part of the
// chain that covers them, and an Ed25519 signature by the store's key over every byte
// after the first line. It proves itself on another machine, without the store.

import crypto from "node:crypto";
import type { Database } from "../platform/sqlite.js";
import type { ChainHead, PrunedGap } from "./chain-log.js";
import { canonicalJson, type Json } from "./chain.js";
import { fingerprint, publicKeyObject, type SigningKey, strictBase64 } from "./signing-key.js";
import type { Row } from "./verify-receipt.js";
import { type ChainRow, ChainVerifier, type Problem, type VerifyReport } from "./verify.js";

export const BUNDLE_FORMAT = "sbx-receipts-bundle";
export const BUNDLE_VERSION = 1;

/** The payload's first line: what the bundle holds and where in the store's chain. */
export interface BundleMeta {
  type: "bundle";
  format: string;
  version: number;
  created_at: string;
  since: string | null;
  /** The position before the first chain line, and its link (null when the store had lost it). */
  start: { position: number; link: string | null };
  /** Where the store's chain ended when the bundle was made. */
  head: { position: number; link: string } | null;
  receipts: number;
  entries: number;
}

/** A column value in JSON: BLOBs as {"base64": …}. */
function encodeValue(v: unknown): Json {
  if (v instanceof Uint8Array) return { base64: Buffer.from(v).toString("base64") };
  if (typeof v === "bigint") return Number(v);
  return (v ?? null) as Json;
}

function encodeRow(row: Row): Json {
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(row)) out[k] = encodeValue(v);
  return out;
}

function decodeRow(json: unknown): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries((json ?? {}) as Record<string, unknown>)) {
    out[k] =
      v && typeof v === "object" && typeof (v as { base64?: unknown }).base64 === "string"
        ? Buffer.from((v as { base64: string }).base64, "base64")
        : v;
  }
  return out;
}

/** The link at the position before `seq`: its row's, or the prune checkpoint's for a run that ended there. */
function linkBefore(db: Database, seq: number): string | null {
  if (seq <= 1) return "0".repeat(64);
  const row = db.prepare<{ link: string }>("SELECT link FROM chain WHERE seq = ?").get(seq - 1);
  if (row) return row.link;
  for (const { data } of db
    .prepare<{ data: string }>("SELECT data FROM chain WHERE receipt_id = '' AND type = 'checkpoint' AND seq > ?")
    .all(seq)) {
    try {
      const gap = (JSON.parse(data) as { gaps: PrunedGap[] }).gaps.find((g) => g.last === seq - 1);
      if (gap) return gap.link;
    } catch {
      // a damaged checkpoint: the link stays unknown
    }
  }
  return null;
}

/**
 * The payload (every line after the header) for the receipts created at or after
 * `since` (all when null), read in one snapshot: their rows, and every chain position
 * from their first to the head (others' positions by link only).
 */
export function bundlePayload(db: Database, since: string | null, now: Date): { text: string; meta: BundleMeta } {
  db.exec("BEGIN");
  try {
    const receipts = db
      .prepare(
        `SELECT * FROM receipts${since === null ? "" : " WHERE created_at >= ?"} ORDER BY created_at, receipt_id`,
      )
      .all(...(since === null ? [] : [since]));
    const head = db.prepare<ChainHead>("SELECT seq, link FROM chain_head WHERE one = 1").get() ?? null;
    const first =
      since === null
        ? 1
        : (db
            .prepare<{ n: number | null }>(
              "SELECT MIN(seq) AS n FROM chain WHERE receipt_id IN (SELECT receipt_id FROM receipts WHERE created_at >= ?)",
            )
            .get(since)?.n ?? (head ? head.seq + 1 : 1));
    const lines: string[] = [];
    const chain = db
      .prepare<ChainRow>("SELECT seq, receipt_id, type, ref, prev, data, link FROM chain WHERE seq >= ? ORDER BY seq")
      .all(first);
    for (const c of chain) {
      lines.push(
        canonicalJson({
          data: c.data,
          entry: c.type,
          link: c.link,
          prev: c.prev,
          receipt_id: c.receipt_id,
          ref: c.ref,
          seq: c.seq,
          type: "chain",
        }),
      );
    }
    const attempts = db.prepare("SELECT * FROM attempts WHERE receipt_id = ? ORDER BY attempt");
    const observations = db.prepare("SELECT * FROM observations WHERE receipt_id = ? ORDER BY id");
    for (const r of receipts) {
      const id = r.receipt_id as string;
      lines.push(
        canonicalJson({
          attempts: attempts.all(id).map(encodeRow),
          observations: observations.all(id).map(encodeRow),
          receipt: encodeRow(r),
          type: "receipt",
        }),
      );
    }
    const meta: BundleMeta = {
      type: "bundle",
      format: BUNDLE_FORMAT,
      version: BUNDLE_VERSION,
      created_at: now.toISOString(),
      since,
      start: { position: first - 1, link: linkBefore(db, first) },
      head: head && { position: head.seq, link: head.link },
      receipts: receipts.length,
      entries: chain.length,
    };
    return { text: [canonicalJson(meta as unknown as Json), ...lines].map((l) => `${l}\n`).join(""), meta };
  } finally {
    db.exec("COMMIT");
  }
}

interface Header {
  algorithm: string;
  format: string;
  key: string;
  signature: string;
  version: number;
}

/** The whole bundle: a header line with the key and the signature, then the payload it signs. */
export function signBundle(payload: string, key: SigningKey): Buffer {
  const bytes = Buffer.from(payload, "utf8");
  const header: Header = {
    algorithm: "ed25519",
    format: BUNDLE_FORMAT,
    key: key.publicRaw.toString("base64"),
    signature: crypto.sign(null, bytes, key.privateKey).toString("base64"),
    version: BUNDLE_VERSION,
  };
  return Buffer.concat([Buffer.from(`${canonicalJson(header as unknown as Json)}\n`), bytes]);
}

export interface BundleVerification {
  /** Whether the signature is valid for the key the bundle names, over every payload byte. */
  signature: "valid" | "invalid";
  /** The key the bundle names (base64 of its 32 bytes) and its fingerprint. */
  key: string | null;
  fingerprint: string | null;
  /** Whether it is the key the person gave (--key); null when none was given. */
  key_matches: boolean | null;
  meta: BundleMeta | null;
  /** What the chain inside says (null when the payload cannot be read). */
  report: VerifyReport | null;
  /** Why it does not verify, most important first; empty when it does. */
  failures: string[];
  intact: boolean;
}

function parseHeader(line: string): Header | null {
  try {
    const h = JSON.parse(line) as Header;
    const keys = ["algorithm", "format", "key", "signature", "version"];
    if (!h || typeof h !== "object" || Object.keys(h).sort().join() !== keys.join()) return null;
    // Every byte of the header counts: it must be written exactly as sbx writes it.
    return canonicalJson(h as unknown as Json) === line ? h : null;
  } catch {
    return null;
  }
}

/** Reads and checks a bundle; `expected` is the public key the person trusts (--key). */
export function verifyBundle(bytes: Buffer, expected: Buffer | null): BundleVerification {
  const out: BundleVerification = {
    signature: "invalid",
    key: null,
    fingerprint: null,
    key_matches: null,
    meta: null,
    report: null,
    failures: [],
    intact: false,
  };
  const nl = bytes.indexOf(0x0a);
  const header = nl < 0 ? null : parseHeader(bytes.subarray(0, nl).toString("utf8"));
  if (!header || header.format !== BUNDLE_FORMAT) {
    out.failures.push("it is not an sbx receipts bundle (its first line is not the header sbx writes)");
    return out;
  }
  if (header.version !== BUNDLE_VERSION || header.algorithm !== "ed25519") {
    out.failures.push(
      `it is a bundle of version ${header.version} (${header.algorithm}); this sbx reads version ${BUNDLE_VERSION}`,
    );
    return out;
  }
  const key = strictBase64(header.key, 32);
  const signature = strictBase64(header.signature, 64);
  const payload = bytes.subarray(nl + 1);
  out.key = header.key;
  if (key) {
    out.fingerprint = fingerprint(key);
    if (expected) out.key_matches = key.equals(expected);
    try {
      if (signature && crypto.verify(null, payload, publicKeyObject(key), signature)) out.signature = "valid";
    } catch {
      // not a usable key: the signature stays invalid
    }
  }
  if (out.key_matches === false) {
    out.failures.push(
      `it was signed by another key (${out.fingerprint}), not the one given (${fingerprint(expected!)})`,
    );
  }
  if (out.signature === "invalid") {
    out.failures.push("its signature does not verify: the bundle was changed after it was signed");
  }
  const read = readPayload(payload.toString("utf8"));
  if (typeof read === "string") out.failures.push(read);
  else {
    out.meta = read.meta;
    out.report = read.verify();
    if (!out.report.intact) {
      out.failures.push(
        `the chain inside names ${out.report.problems.length} problem${out.report.problems.length === 1 ? "" : "s"}`,
      );
    }
  }
  out.intact = out.failures.length === 0;
  return out;
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isLink = (v: unknown): v is string => typeof v === "string" && /^[0-9a-f]{64}$/.test(v);
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** The description line, checked field by field; null when any is not what sbx writes. */
function readMeta(v: unknown): BundleMeta | null {
  if (!isObject(v) || v.type !== "bundle" || v.format !== BUNDLE_FORMAT || v.version !== BUNDLE_VERSION) return null;
  const start = v.start;
  const head = v.head;
  if (!isObject(start) || !isInt(start.position) || !(start.link === null || isLink(start.link))) return null;
  if (!(head === null || (isObject(head) && isInt(head.position) && isLink(head.link)))) return null;
  if (typeof v.created_at !== "string" || !(v.since === null || typeof v.since === "string")) return null;
  if (!isInt(v.receipts) || !isInt(v.entries)) return null;
  return v as unknown as BundleMeta;
}

function readChainLine(v: Record<string, unknown>): ChainRow | null {
  const nullableInt = (x: unknown) => x === null || isInt(x);
  if (!isInt(v.seq) || typeof v.receipt_id !== "string" || typeof v.entry !== "string" || !isLink(v.link)) return null;
  if (!nullableInt(v.ref) || !nullableInt(v.prev) || !(v.data === null || typeof v.data === "string")) return null;
  return {
    seq: v.seq,
    receipt_id: v.receipt_id,
    type: v.entry,
    ref: v.ref as number | null,
    prev: v.prev as number | null,
    data: v.data as string | null,
    link: v.link,
  };
}

/** The payload's lines, ready to verify; a string says why it cannot be read. */
function readPayload(text: string): { meta: BundleMeta; verify: () => VerifyReport } | string {
  const lines = text.split("\n");
  if (lines.pop() !== "") return "its payload does not end with a newline: it was cut short";
  const chain: ChainRow[] = [];
  const receipts: Array<{ receipt: Row; attempts: Row[]; observations: Row[] }> = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(lines[0] ?? "");
  } catch {
    parsed = null;
  }
  const meta = readMeta(parsed);
  if (meta === null) return "its description (the line after the header) is not what sbx writes";
  for (let i = 1; i < lines.length; i++) {
    let line: unknown;
    try {
      line = JSON.parse(lines[i]!);
    } catch (err) {
      return `line ${i + 2} is not JSON (${(err as Error).message})`;
    }
    const row = isObject(line) && line.type === "chain" ? readChainLine(line) : null;
    if (row) chain.push(row);
    else if (
      isObject(line) &&
      line.type === "receipt" &&
      isObject(line.receipt) &&
      typeof line.receipt.receipt_id === "string" &&
      Array.isArray(line.attempts) &&
      Array.isArray(line.observations) &&
      [...line.attempts, ...line.observations].every(isObject)
    ) {
      receipts.push({
        receipt: decodeRow(line.receipt),
        attempts: line.attempts.map(decodeRow),
        observations: line.observations.map(decodeRow),
      });
    } else return `line ${i + 2} is neither a chain entry nor a receipt as sbx writes them`;
  }
  return {
    meta,
    verify: () => {
      const bundled = new Set(receipts.map((r) => String(r.receipt.receipt_id)));
      const verifier = new ChainVerifier({
        chain,
        head: meta.head && { seq: meta.head.position, link: meta.head.link },
        start: { seq: meta.start.position, link: meta.start.link },
        complete: (id) => bundled.has(id),
      });
      for (const r of receipts) verifier.receipt(String(r.receipt.receipt_id), r.receipt, r.attempts, r.observations);
      const report = verifier.finish();
      if (report.receipts !== meta.receipts || report.entries !== meta.entries) {
        const problem: Problem = {
          kind: "missing",
          receipt_id: null,
          entry: null,
          position: null,
          detail: `the bundle says it holds ${meta.receipts} receipts and ${meta.entries} chain entries; it holds ${report.receipts} and ${report.entries}`,
        };
        report.problems.push(problem);
        report.intact = false;
      }
      return report;
    },
  };
}
