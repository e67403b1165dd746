// A database written by each released schema must open and read the same with
// today's code (migrations are forward-only; a fixture per released schema), and
// verify: what was stored before the chain began is reported as such, never as broken.

import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { classifyObservation } from "../../src/receipts/classify.js";
import { receiptDocument } from "../../src/receipts/document.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { answerOf } from "../support/receipt-store.js";
import { tempDir } from "../support/temp.js";

const fixture = (v: number) => path.join(import.meta.dirname, "..", "fixtures", `receipts-v${v}.db`);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function copyOfFixture(v = 1): string {
  const dir = tempDir("sbx-fixture-");
  dirs.push(dir);
  const file = path.join(dir, "receipts.db");
  fs.copyFileSync(fixture(v), file);
  return file;
}

describe("receipts.db of schema 1", () => {
  it("opens, migrates forward and reads both receipts as they were", async () => {
    const store = ReceiptStore.open(copyOfFixture());
    try {
      const docs = store.list().map(receiptDocument);
      expect(docs.map((d) => [d.idempotency_key, d.classification, d.exit])).toEqual([
        ["fixture-key-2", "dispatched", null],
        ["fixture-key-1", "succeeded", 0],
      ]);
      expect(docs[1]).toMatchObject({
        execution_id: "exe_fixture1",
        stdout: "fixture\n",
        answered_at: "2026-11-29T10:00:01.000Z",
      });
      expect(store.resolve("exe_fixture1")).toBe(docs[1]!.receipt_id);
    } finally {
      store.close();
    }
  });

  it("takes new writes after opening", async () => {
    const store = ReceiptStore.open(copyOfFixture());
    try {
      const id = store.resolve("fixture-key-2");
      expect(store.beginAttempt(id)).toBe(2);
    } finally {
      store.close();
    }
  });
});

describe("receipts.db of schema 2", () => {
  const FIXTURE_V2 = path.join(import.meta.dirname, "..", "fixtures", "receipts-v2.db");

  it("reads a process start's process id and a submission's request id in their own fields, and no profile as null", async () => {
    const dir = tempDir("sbx-fixture-");
    dirs.push(dir);
    const file = path.join(dir, "receipts.db");
    fs.copyFileSync(FIXTURE_V2, file);
    const store = ReceiptStore.open(file);
    try {
      const docs = store.list().map(receiptDocument);
      const ids = docs.map((d) => [d.kind, d.profile, d.execution_id, d.process_id, d.request_id, d.classification]);
      expect(ids).toEqual([
        ["execute", "ci", "exe_fixture2", null, null, "dispatched"],
        ["jobs_submit", null, null, null, "fixture-request-1", "succeeded"],
        ["process_start", null, null, "prc_fixture1", null, "succeeded"],
      ]);
      // What the answers taught moved with them: each observation names what it saw.
      const answered = (i: number) => store.get(docs[i]!.receipt_id).observations.at(-1)!;
      expect(answered(1)).toMatchObject({ execution_id: null, request_id: "fixture-request-1" });
      expect(answered(2)).toMatchObject({ execution_id: null, process_id: "prc_fixture1" });
      // Found by the id it created, as before.
      expect(store.resolve("prc_fixture1")).toBe(docs[2]!.receipt_id);
      expect(store.resolve("fixture-request-1")).toBe(docs[1]!.receipt_id);
      // Stored before the chain: sealed as they are, verified intact.
      expect(await store.verify()).toMatchObject({ intact: true, problems: [], pre_chain: { receipts: 3 } });
    } finally {
      store.close();
    }
  });
});

describe("receipts.db of schema 1, migrated to the chain", () => {
  it("verifies intact, both receipts sealed as pre-chain (nothing rewritten)", async () => {
    const file = copyOfFixture();
    const store = ReceiptStore.open(file);
    try {
      const report = await store.verify();
      expect(report).toMatchObject({ intact: true, problems: [], pre_chain: { receipts: 2 }, entries: 3 });
      const id = store.resolve("fixture-key-2");
      store.recordObservation(
        id,
        "refresh",
        classifyObservation({ kind: "transport", sent: false, code: "ECONNREFUSED", message: "refused" }, "read"),
      );
      expect((await store.verify()).problems).toEqual([]);
    } finally {
      store.close();
    }
  });

  it("a pre-chain receipt changed after the chain began is named", async () => {
    const file = copyOfFixture();
    ReceiptStore.open(file).close();
    const db = new Database(file);
    db.prepare("UPDATE observations SET stdout = 'forged' WHERE source = 'answer'").run();
    db.close();
    const store = ReceiptStore.open(file);
    try {
      const id = store.resolve("fixture-key-1");
      expect((await store.verify()).problems.map((p) => [p.kind, p.receipt_id, p.entry])).toEqual([
        ["changed", id, "pre-chain content (sealed)"],
      ]);
    } finally {
      store.close();
    }
  });
});

describe("receipts.db of schema 4 (the chain: a seal, entries after it, an execution id, a prune)", () => {
  it("opens, reads its receipts as they were, and verifies intact with its prune", async () => {
    const store = ReceiptStore.open(copyOfFixture(4));
    try {
      const docs = store.list().map(receiptDocument);
      expect(docs.map((d) => [d.idempotency_key, d.classification, d.execution_id, d.stdout])).toEqual([
        ["fixture-key-3", "succeeded", "exe_fixture3", "three\n"],
        ["fixture-key-2", "succeeded", "exe_fixture2", "later\n"],
      ]);
      const report = await store.verify();
      expect(report).toMatchObject({ intact: true, problems: [], pre_chain: { receipts: 2 }, entries: 9 });
      expect(report.pruned).toEqual([
        expect.objectContaining({ before: "2026-11-29T10:00:30.000Z", receipts: 1, entries: 1, position: 10 }),
      ]);
    } finally {
      store.close();
    }
  });

  it("takes new writes, which extend its chain (an observation with a boot, schema 5, among them)", async () => {
    const store = ReceiptStore.open(copyOfFixture(4));
    try {
      const id = store.resolve("fixture-key-3");
      expect(store.beginAttempt(id)).toBe(2);
      expect(await store.verify()).toMatchObject({ intact: true, head: { seq: 12 } });
      const answer = answerOf({ outcome: "succeeded", exit_code: 0, boot: "boot_f" }, "exe_fixture3");
      expect(answer.boot).toBe("boot_f");
      store.recordObservation(id, "answer", answer, { attempt: 2 });
      expect(receiptDocument(store.get(id)).boot).toBe("boot_f");
      expect(await store.verify()).toMatchObject({ intact: true, head: { seq: 13 } });
    } finally {
      store.close();
    }
  });
});
