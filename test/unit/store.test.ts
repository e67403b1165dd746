// The receipt store on a real temp SQLite file.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Classified, classifyObservation, type Observed } from "../../src/receipts/classify.js";
import { openDatabase } from "../../src/platform/sqlite.js";
import { receiptDocument } from "../../src/receipts/document.js";
import { AmbiguousReceipt, ReceiptNotFound } from "../../src/receipts/errors.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { executionRecord } from "../support/misbehaving-server.js";
import { newReceipt } from "../support/receipt-store.js";
import { tempDir } from "../support/temp.js";

let dir: string;
let file: string;
const open: ReceiptStore[] = [];

function openStore(): ReceiptStore {
  const s = ReceiptStore.open(file);
  open.push(s);
  return s;
}

beforeEach(() => {
  dir = tempDir("sbx-store-");
  file = path.join(dir, "receipts.db");
});

afterEach(() => {
  for (const s of open.splice(0)) {
    try {
      s.close();
    } catch {
      // already closed
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

const answer = (over: Record<string, unknown>, executionId = "exe_1"): Classified =>
  classifyObservation(
    {
      kind: "answer",
      status: 200,
      headers: {},
      body: JSON.stringify(executionRecord(null, { execution_id: executionId, ...over })),
    },
    "dispatch",
  );
const succeeded = (executionId = "exe_1") =>
  answer({ outcome: "succeeded", exit_code: 0, stdout: "hi\n" }, executionId);
const failedRead = (): Classified =>
  classifyObservation({ kind: "transport", sent: false, code: "ECONNREFUSED", message: "refused" }, "read");
const deadline = (): Classified => classifyObservation({ kind: "deadline", sent: true }, "dispatch");
const readOf = (obs: Observed): Classified => classifyObservation(obs, "read");

describe("names say what they hold", () => {
  it("a receipt sent where no profile points keeps no profile (NULL), and each kind's id its own column", () => {
    const s = openStore();
    const row = s.createForDispatch(newReceipt({ profile: null, kind: "process_start" }));
    s.recordObservation(
      row.receipt_id,
      "answer",
      classifyObservation(
        { kind: "answer", status: 201, headers: {}, body: JSON.stringify({ process_id: "prc_1" }) },
        "dispatch",
        "process_start",
      ),
    );
    s.close();
    const db = openDatabase(file);
    try {
      expect(db.prepare("SELECT profile, execution_id, process_id FROM receipts").all()).toEqual([
        { profile: null, execution_id: null, process_id: "prc_1" },
      ]);
    } finally {
      db.close();
    }
  });
});

describe("write before dispatch", () => {
  it("the receipt is committed: a second connection sees it right after createForDispatch", () => {
    const a = openStore();
    const row = a.createForDispatch(newReceipt());
    const b = openStore();
    const seen = b.get(row.receipt_id);
    expect(seen.receipt.classification).toBe("dispatched");
    expect(seen.receipt.idempotency_key).toBe(row.idempotency_key);
    expect(seen.attempts.map((x) => x.attempt)).toEqual([1]);
    expect(seen.observations.map((o) => [o.source, o.classification])).toEqual([["dispatch", "dispatched"]]);
    expect(receiptDocument(seen)).toMatchObject({ classification: "dispatched", may_have_run: true, exit: null });
  });

  it("keeps the exact body bytes and their sha256", () => {
    const s = openStore();
    const body = Buffer.concat([
      Buffer.from('{"command":["printf","%s","caf\u00e9 \\u0000 \\t"],"env":{"A":" spaced  "},"timeout":1000}'),
      Buffer.from([0x0a, 0xff, 0x00, 0x20]),
    ]);
    const row = s.createForDispatch(newReceipt({ body }));
    const again = openStore().get(row.receipt_id);
    expect(Buffer.isBuffer(again.receipt.body)).toBe(true);
    expect(again.receipt.body.equals(body)).toBe(true);
    const sha = createHash("sha256").update(body).digest("hex");
    expect(again.receipt.body_sha256).toBe(sha);
    expect(again.attempts[0]!.body_sha256).toBe(sha);
  });

  it("a resubmit is a new attempt with the same body sha256", () => {
    const s = openStore();
    const row = s.createForDispatch(newReceipt());
    s.recordObservation(row.receipt_id, "answer", deadline(), { attempt: 1 });
    expect(s.beginAttempt(row.receipt_id)).toBe(2);
    s.recordObservation(row.receipt_id, "answer", succeeded(), { attempt: 2 });
    const got = s.get(row.receipt_id);
    expect(got.attempts.map((a) => [a.attempt, a.body_sha256])).toEqual([
      [1, row.body_sha256],
      [2, row.body_sha256],
    ]);
    expect(got.receipt.classification).toBe("succeeded");
  });
});

describe("observations are appended; the classification is derived", () => {
  it("a failed read (classification null) never erases an earlier definitive answer", () => {
    const s = openStore();
    const id = s.createForDispatch(newReceipt()).receipt_id;
    s.recordObservation(id, "answer", succeeded(), { attempt: 1 });
    s.recordObservation(id, "refresh", failedRead());
    s.recordObservation(id, "wait", readOf({ kind: "answer", status: 404, headers: {}, body: "{}" }));
    const got = s.get(id);
    expect(got.receipt.classification).toBe("succeeded");
    expect(got.observations.map((o) => o.classification)).toEqual(["dispatched", "succeeded", null, null]);
    expect(receiptDocument(got)).toMatchObject({ classification: "succeeded", exit: 0, stdout: "hi\n" });
  });

  it("a failed read never erases an earlier in-doubt answer either", () => {
    const s = openStore();
    const id = s.createForDispatch(newReceipt()).receipt_id;
    s.recordObservation(id, "answer", deadline(), { attempt: 1 });
    s.recordObservation(id, "refresh", failedRead());
    expect(s.get(id).receipt.classification).toBe("local_timeout");
  });

  it("otherwise the latest informative observation wins", () => {
    const s = openStore();
    const id = s.createForDispatch(newReceipt()).receipt_id;
    s.recordObservation(id, "answer", deadline(), { attempt: 1 });
    expect(s.get(id).receipt.classification).toBe("local_timeout");
    s.recordObservation(id, "wait", answer({ outcome: "pending", exit_code: null }));
    expect(s.get(id).receipt.classification).toBe("running");
    expect(s.get(id).receipt.execution_id).toBe("exe_1");
    s.recordObservation(id, "wait", answer({ outcome: "failed", exit_code: 4 }));
    expect(s.get(id).receipt.classification).toBe("failed");
    expect(receiptDocument(s.get(id)).exit).toBe(4);
  });

  it("a definitive answer is not overturned by a later in-doubt one", () => {
    const s = openStore();
    const id = s.createForDispatch(newReceipt()).receipt_id;
    s.recordObservation(id, "answer", answer({ outcome: "failed", exit_code: 2 }), { attempt: 1 });
    s.recordObservation(id, "refresh", answer({ outcome: "succeeded", exit_code: 0, record_pending: true }));
    expect(s.get(id).receipt.classification).toBe("failed");
  });

  it("keeps the first execution id it learned", () => {
    const s = openStore();
    const id = s.createForDispatch(newReceipt()).receipt_id;
    s.recordObservation(id, "answer", answer({ outcome: "pending", exit_code: null }, "exe_first"));
    s.recordObservation(id, "wait", succeeded("exe_other"));
    expect(s.get(id).receipt.execution_id).toBe("exe_first");
  });
});

describe("resolve", () => {
  it("finds a receipt by receipt id, execution id, key, and a unique prefix of each", () => {
    const s = openStore();
    const a = s.createForDispatch(newReceipt({ idempotencyKey: "alpha-key-1" }));
    const b = s.createForDispatch(newReceipt({ idempotencyKey: "bravo-key-1" }));
    s.recordObservation(a.receipt_id, "answer", succeeded("exe_aaaa1111"));
    s.recordObservation(b.receipt_id, "answer", succeeded("exe_bbbb2222"));
    expect(s.resolve(a.receipt_id)).toBe(a.receipt_id);
    expect(s.resolve("exe_aaaa1111")).toBe(a.receipt_id);
    expect(s.resolve("alpha-key-1")).toBe(a.receipt_id);
    expect(s.resolve("bravo-k")).toBe(b.receipt_id);
    expect(s.resolve("exe_bbbb")).toBe(b.receipt_id);
    expect(s.resolve(b.receipt_id.slice(0, b.receipt_id.length - 3))).toBe(b.receipt_id);
  });

  it("an ambiguous prefix names its candidates; an unknown ref is not found", () => {
    const s = openStore();
    const a = s.createForDispatch(newReceipt());
    const b = s.createForDispatch(newReceipt());
    // "rcp_" starts every receipt id: a prefix of both.
    const common = "rcp_";
    let caught: unknown;
    try {
      s.resolve(common);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AmbiguousReceipt);
    expect([...(caught as AmbiguousReceipt).candidates].sort()).toEqual([a.receipt_id, b.receipt_id].sort());
    expect(() => s.resolve("nothing-like-this")).toThrow(ReceiptNotFound);
    // Prefixes shorter than 4 characters are not searched.
    expect(() => s.resolve("rcp")).toThrow(ReceiptNotFound);
  });

  it("LIKE wildcards in a ref are literal", () => {
    const s = openStore();
    s.createForDispatch(newReceipt({ idempotencyKey: "wild-one" }));
    s.createForDispatch(newReceipt({ idempotencyKey: "wild-two" }));
    expect(() => s.resolve("wild%")).toThrow(ReceiptNotFound);
    expect(() => s.resolve("wil_")).toThrow(ReceiptNotFound);
  });
});

describe("the database file", () => {
  it("is private to its user (0600), with its -wal and -shm", () => {
    const s = openStore();
    s.createForDispatch(newReceipt());
    // While a connection is open in WAL mode, the -wal and -shm files exist too.
    for (const f of [file, `${file}-wal`, `${file}-shm`]) {
      expect((fs.statSync(f).mode & 0o777).toString(8), f).toBe("600");
    }
  });
});

describe("list and prune", () => {
  it("lists newest first, filtered by one or several classifications, with a limit", () => {
    const s = openStore();
    const t = (n: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, n));
    const ok = s.createForDispatch(newReceipt(), t(1)).receipt_id;
    s.recordObservation(ok, "answer", succeeded("exe_ok"));
    const doubt = s.createForDispatch(newReceipt(), t(2)).receipt_id;
    s.recordObservation(doubt, "answer", deadline());
    const sent = s.createForDispatch(newReceipt(), t(3)).receipt_id;

    const ids = (xs: ReturnType<ReceiptStore["list"]>) => xs.map((x) => x.receipt.receipt_id);
    expect(ids(s.list())).toEqual([sent, doubt, ok]);
    expect(ids(s.list({ classification: "succeeded" }))).toEqual([ok]);
    expect(ids(s.list({ classification: ["local_timeout", "dispatched"] }))).toEqual([sent, doubt]);
    expect(ids(s.list({ classification: ["local_timeout", "dispatched"], limit: 1 }))).toEqual([sent]);
    expect(ids(s.list({ classification: "failed" }))).toEqual([]);
    expect(ids(s.list({ limit: 2 }))).toEqual([sent, doubt]);
    expect(ids(s.list({ since: t(2).toISOString() }))).toEqual([sent, doubt]);
  });

  it("prune deletes receipts created before a time, with their attempts and observations", () => {
    const s = openStore();
    const old = s.createForDispatch(newReceipt(), new Date("2020-01-01T00:00:00Z")).receipt_id;
    s.recordObservation(old, "answer", succeeded("exe_old"));
    const recent = s.createForDispatch(newReceipt(), new Date("2030-01-01T00:00:00Z")).receipt_id;
    expect(s.prune("2025-01-01T00:00:00.000Z")).toEqual({ deleted: 1, kept: 0 });
    expect(() => s.get(old)).toThrow(ReceiptNotFound);
    expect(() => s.resolve("exe_old")).toThrow(ReceiptNotFound);
    expect(s.list().map((x) => x.receipt.receipt_id)).toEqual([recent]);
    expect(s.prune("2025-01-01T00:00:00.000Z")).toEqual({ deleted: 0, kept: 0 });
  });

  it("prune says how many receipts it kept because their classification is to be kept", () => {
    const s = openStore();
    const doubt = s.createForDispatch(newReceipt(), new Date("2020-01-01T00:00:00Z")).receipt_id;
    const done = s.createForDispatch(newReceipt(), new Date("2020-01-02T00:00:00Z")).receipt_id;
    s.recordObservation(done, "answer", succeeded("exe_done"));
    expect(s.prune("2025-01-01T00:00:00.000Z", { keep: ["dispatched"] })).toEqual({ deleted: 1, kept: 1 });
    expect(s.get(doubt).receipt.receipt_id).toBe(doubt);
  });

  it("names the true number of receipts an ambiguous prefix matches", () => {
    const s = openStore();
    for (let i = 0; i < 37; i++) s.createForDispatch({ ...newReceipt(), idempotencyKey: `same-prefix-${i}` });
    let error: unknown;
    try {
      s.resolve("same-prefix");
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(AmbiguousReceipt);
    expect((error as AmbiguousReceipt).total).toBe(37);
    expect((error as Error).message).toMatch(/^"same-prefix" matches 37 receipts: (rcp_[^,]+, ){4}rcp_[^,]+, …$/);
  });
});
