// A database written by schema 1, as released, must open and read the same with
// today's code (migrations are forward-only; a fixture per released schema).

import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { receiptDocument } from "../../src/receipts/document.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { tempDir } from "../support/temp.js";

const FIXTURE = path.join(import.meta.dirname, "..", "fixtures", "receipts-v1.db");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function copyOfFixture(): string {
  const dir = tempDir("sbx-fixture-");
  dirs.push(dir);
  const file = path.join(dir, "receipts.db");
  fs.copyFileSync(FIXTURE, file);
  return file;
}

describe("receipts.db of schema 1", () => {
  it("opens, migrates forward and reads both receipts as they were", () => {
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

  it("takes new writes after opening", () => {
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

  it("reads a process start's process id and a submission's request id in their own fields, and no profile as null", () => {
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
    } finally {
      store.close();
    }
  });
});
