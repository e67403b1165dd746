// A database written by schema 1, as released, must open and read the same with
// today's code (migrations are forward-only; a fixture per released schema).

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { receiptDocument } from "../../src/receipts/document.js";
import { ReceiptStore } from "../../src/receipts/store.js";

const FIXTURE = path.join(import.meta.dirname, "..", "fixtures", "receipts-v1.db");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function copyOfFixture(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-fixture-"));
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
