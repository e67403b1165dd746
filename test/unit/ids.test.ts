// Ids a person can type (src/common/ids.ts): random characters lead, the first 8 are
// the short form, and the receipt store never gives two receipts the same short form.
// The property the issue asks for: a store of 100,000 receipts made within one minute,
// every receipt's 8-character short form unique, and a lookup by it finds that receipt.

import { randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasShortForm, ID_ALPHABET, newId, newUniqueId, prefixRange, shortId } from "../../src/common/ids.js";
import type { Database } from "../../src/platform/sqlite.js";
import { AmbiguousReceipt } from "../../src/receipts/errors.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { tempDir } from "../support/temp.js";

describe("ids", () => {
  it("are a type prefix and 16 characters of the alphabet, with the short form their first 8", () => {
    const id = newId("rcp", randomBytes);
    expect(id).toMatch(/^rcp_[0-9a-hjkmnp-tv-z]{16}$/);
    expect(hasShortForm(id)).toBe(true);
    expect(shortId(id)).toBe(id.slice(0, 12));
    for (const prefix of ["exe", "prc", "sbx"] as const)
      expect(shortId(newId(prefix, randomBytes))).toMatch(/^[a-z]{3}_\w{8}$/);
  });

  it("encode every bit of the random bytes, in order", () => {
    expect(newId("exe", (n) => Buffer.alloc(n, 0))).toBe(`exe_${"0".repeat(16)}`);
    expect(newId("exe", (n) => Buffer.alloc(n, 0xff))).toBe(`exe_${"z".repeat(16)}`);
    // 0x08 0x42 … is 00001 00001 00001 …: one "1" per 5 bits.
    const ones = Buffer.from([0x08, 0x42, 0x10, 0x84, 0x21, 0x08, 0x42, 0x10, 0x84, 0x21]);
    expect(newId("exe", () => ones)).toBe(`exe_${"1".repeat(16)}`);
    expect(ID_ALPHABET).toHaveLength(32);
  });

  it("leave ids of the earlier formats whole: their first characters are a time, not random", () => {
    for (const old of ["rcp_0mx4ph1a2b3c4d5e6f7g8h9", "exe_4f1c2a9b0d8e7f6a5b4c", "job_51dd0e2a9b8c7d6e5f4a3b2c"]) {
      expect(hasShortForm(old)).toBe(false);
      expect(shortId(old)).toBe(old);
    }
  });

  it("are drawn again while their short form is taken", () => {
    const draws = [Buffer.alloc(10, 0), Buffer.alloc(10, 0), Buffer.alloc(10, 0xff)];
    const taken = new Set([`rcp_${"0".repeat(8)}`]);
    expect(
      newUniqueId(
        "rcp",
        (s) => taken.has(s),
        () => draws.shift()!,
      ),
    ).toBe(`rcp_${"z".repeat(16)}`);
    expect(draws).toHaveLength(0);
    expect(() =>
      newUniqueId(
        "rcp",
        () => true,
        () => Buffer.alloc(10, 0),
      ),
    ).toThrow(/after 1000 draws/);
  });

  it("are found by prefix through a range: every string that starts with it, and nothing else", () => {
    const { lo, hi } = prefixRange("rcp_ab");
    for (const inside of ["rcp_ab", "rcp_ab0", "rcp_abzzzz", "rcp_ab-:."])
      expect(inside >= lo && inside < hi).toBe(true);
    for (const outside of ["rcp_a", "rcp_aa", "rcp_ac", "rcp_b"]) expect(outside >= lo && outside < hi).toBe(false);
  });
});

describe("a receipt store of 100,000 receipts made within one minute", () => {
  const N = 100_000;
  let dir: string;
  let store: ReceiptStore;
  const ids: string[] = [];

  beforeAll(() => {
    dir = tempDir("sbx-ids-");
    store = ReceiptStore.open(path.join(dir, "receipts.db"));
    // Every receipt through createForDispatch (its id drawn and checked in its write
    // transaction, as for any receipt); only the commits are one, so that 100,000 take
    // seconds instead of 100,000 fsyncs.
    const db = (store as unknown as { db: Database }).db;
    const t0 = Date.parse("2026-03-01T12:00:00.000Z");
    db.transaction(() => {
      for (let i = 0; i < N; i++) {
        const row = store.createForDispatch(
          {
            kind: "execute",
            profile: "local",
            apiUrl: "unix:/run/sbx.sock",
            sandbox: "default",
            idempotencyKey: `sbx-key-${i}`,
            method: "POST",
            path: "/api/v1/sandbox/default/execute",
            body: Buffer.from(`{"command":["echo","${i}"]}`),
          },
          new Date(t0 + Math.floor((i * 60_000) / N)),
        );
        ids.push(row.receipt_id);
      }
    });
    // About 10 s of CPU; the limit is a safety net for a machine busy with other suites, never a speed check.
  }, 900_000);

  afterAll(() => {
    store.close();
  });

  it("gives every receipt an 8-character short form no other receipt has", () => {
    expect(ids).toHaveLength(N);
    expect(ids.every(hasShortForm)).toBe(true);
    expect(new Set(ids.map(shortId)).size).toBe(N);
  });

  it("finds each receipt by its short form", () => {
    const missed = ids.filter((id) => store.resolve(shortId(id)) !== id);
    expect(missed).toEqual([]);
  }, 900_000);

  it("finds one by 6 or 7 characters when no other receipt starts alike, and names several when others do", () => {
    const six = new Map<string, number>();
    for (const id of ids) six.set(id.slice(0, 10), (six.get(id.slice(0, 10)) ?? 0) + 1);
    const unique = ids.find((id) => six.get(id.slice(0, 10)) === 1)!;
    expect(store.resolve(unique.slice(0, 10))).toBe(unique);
    // With 2^30 six-character prefixes, 100,000 receipts share a few: those are refused, naming them.
    const shared = [...six.entries()].find(([, n]) => n > 1);
    if (shared) expect(() => store.resolve(shared[0])).toThrow(AmbiguousReceipt);
  });
});
