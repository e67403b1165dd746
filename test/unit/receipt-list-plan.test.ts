// `sbx receipts list` stays as fast with 100,000 receipts as with 100: its queries read
// an index in order and stop at the limit. SQLite's own query plans say so.

import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ListFilter, listQuery } from "../../src/receipts/list-query.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { makeHome, removeHome } from "../support/cli.js";

let home: string;
let db: Database.Database;
beforeAll(() => {
  home = makeHome("sbx-plan-");
  const file = path.join(home, "receipts.db");
  ReceiptStore.open(file).close(); // every migration applied
  db = new Database(file, { readonly: true });
});
afterAll(() => {
  db.close();
  removeHome(home);
});

function plan(filter: ListFilter): string[] {
  const { sql, params } = listQuery(filter);
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail);
}

describe("the receipts list's query plans", () => {
  it("newest first, with a limit: the time index read in order, nothing sorted", () => {
    for (const filter of [{ limit: 50 }, { limit: 50, since: "2026-01-01T00:00:00.000Z" }]) {
      const lines = plan(filter);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^(SCAN|SEARCH) receipts USING COVERING INDEX receipts_by_created_id\b/);
    }
  });

  it("by classification: one index range per classification, only the limited pieces sorted", () => {
    const lines = plan({ limit: 50, classification: ["outcome_unknown", "local_timeout", "failed"] });
    const reads = lines.filter((l) => /\breceipts\b/.test(l));
    expect(reads).toHaveLength(3);
    for (const l of reads) {
      expect(l).toMatch(
        /^SEARCH receipts USING COVERING INDEX receipts_by_classification_created \(classification=\?\)/,
      );
    }
    // Never a scan of the table, never an index read without its range.
    expect(lines.filter((l) => /^SCAN receipts\b/.test(l))).toEqual([]);
  });
});
