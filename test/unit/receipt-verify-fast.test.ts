// Verify's fast path (src/receipts/verify-fast.ts, on one thread or several through
// verify-threads.ts) either gives exactly the report of the entry-by-entry verifier
// (verify.ts) or proves nothing, on a real store tampered with SQLite directly: it
// never says "intact" where verify.ts finds a problem. The problems themselves are
// named by verify.ts (test/unit/receipt-chain.test.ts).

import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/platform/sqlite.js";
import { verifyStore } from "../../src/receipts/verify-store.js";
import { verifyOnThreads } from "../../src/receipts/verify-threads.js";
import type { VerifyReport } from "../../src/receipts/verify.js";
import { REPO_ROOT } from "../support/cli.js";
import {
  answerOf,
  bothWays,
  deadlineAnswer,
  newReceipt,
  populate,
  type TempStore,
  tempStore,
} from "../support/receipt-store.js";

let t: TempStore;
beforeEach(() => {
  t = tempStore("sbx-verify-fast-");
});
afterEach(() => t.remove());

/** Verified on `threads` threads through a store connection, as `receipts verify` does. */
async function onThreads(file: string, threads: number): Promise<VerifyReport> {
  const db = openDatabase(file);
  try {
    return await verifyStore(db, { file, threads });
  } finally {
    db.close();
  }
}

/**
 * Tampers, each SQL on the file: those of receipt-chain.test.ts and stranger ones (rows
 * at positions before the first, a store entry with a receipt's fields, values of
 * another type than sbx writes).
 */
const TAMPERS: Array<[string, (ids: string[]) => Array<[string, ...unknown[]]>]> = [
  ["a changed body", ([a]) => [["UPDATE receipts SET body = x'7b7d' WHERE receipt_id = ?", a]]],
  [
    "a boot set on an observation afterwards",
    ([a]) => [["UPDATE observations SET boot = 'boot-x' WHERE receipt_id = ?", a]],
  ],
  ["a changed stdout", ([a]) => [["UPDATE observations SET stdout = 'bye' WHERE receipt_id = ?", a]]],
  ["a classification changed", ([a]) => [["UPDATE receipts SET classification = 'failed' WHERE receipt_id = ?", a]]],
  [
    "a deleted observation",
    ([, b]) => [["DELETE FROM observations WHERE id = (SELECT max(id) FROM observations WHERE receipt_id = ?)", b]],
  ],
  ["a deleted receipt", ([, b]) => [["DELETE FROM receipts WHERE receipt_id = ?", b]]],
  [
    "a deleted receipt with its chain",
    ([, b]) => [
      ["DELETE FROM receipts WHERE receipt_id = ?", b],
      ["DELETE FROM chain WHERE receipt_id = ?", b],
    ],
  ],
  ["the newest entries deleted", () => [["DELETE FROM chain WHERE seq = (SELECT max(seq) FROM chain)"]]],
  ["the head deleted", () => [["DELETE FROM chain_head"]]],
  ["the head moved back", () => [["UPDATE chain_head SET seq = seq - 1"]]],
  // Its first character made another one: replacing it by 'f' changed nothing when it was one (1 run in 16).
  [
    "a link edited",
    () => [
      [
        "UPDATE chain SET link = (CASE WHEN substr(link, 1, 1) = 'f' THEN 'e' ELSE 'f' END) || substr(link, 2) WHERE seq = 3",
      ],
    ],
  ],
  [
    "two observations' contents swapped",
    ([, b]) => [
      ["UPDATE observations SET stdout = CASE source WHEN 'answer' THEN 'r' ELSE 'a' END WHERE receipt_id = ?", b],
    ],
  ],
  [
    "a forged observation",
    ([a]) => [
      [
        "INSERT INTO observations (receipt_id, source, at, classification, definitive) VALUES (?, 'refresh', 'x', 'failed', 1)",
        a,
      ],
    ],
  ],
  [
    "a forged attempt",
    ([a]) => [["INSERT INTO attempts (receipt_id, attempt, dispatched_at, body_sha256) VALUES (?, 9, 'x', 'y')", a]],
  ],
  [
    "a forged receipt",
    ([a]) => [
      [
        "INSERT INTO receipts SELECT 'rcp_forged', kind, api_url, sandbox_id, idempotency_key, method, path, body, body_sha256, created_at, NULL, 'dispatched', NULL, NULL, profile, mcp_tool, mcp_request_id FROM receipts WHERE receipt_id = ?",
        a,
      ],
    ],
  ],
  [
    "a copy of an entry at position 0",
    () => [["INSERT INTO chain SELECT 0, receipt_id, type, ref, prev, data, link FROM chain WHERE seq = 1"]],
  ],
  [
    "a receipt's entry at a negative position",
    ([a]) => [
      [
        "INSERT INTO chain SELECT -5, receipt_id, type, ref, NULL, data, link FROM chain WHERE receipt_id = ? ORDER BY seq LIMIT 1",
        a,
      ],
    ],
  ],
  [
    "an entry's type changed",
    ([a]) => [["UPDATE chain SET type = 'attempt' WHERE receipt_id = ? AND type = 'request'", a]],
  ],
  [
    "an entry moved to another receipt",
    ([a, b]) => [["UPDATE chain SET receipt_id = ? WHERE receipt_id = ? AND type = 'observation'", b, a]],
  ],
  ["an exit code as a REAL", ([, b]) => [["UPDATE observations SET exit_code = 3.5 WHERE receipt_id = ?", b]]],
  ["a definitive flag as text", ([a]) => [["UPDATE observations SET definitive = 'yes' WHERE receipt_id = ?", a]]],
  ["stdout as a BLOB", ([a]) => [["UPDATE observations SET stdout = CAST(stdout AS BLOB) WHERE receipt_id = ?", a]]],
  [
    "an execution id the entries never recorded",
    ([a]) => [["UPDATE receipts SET execution_id = 'exe_other' WHERE receipt_id = ?", a]],
  ],
  [
    "a request id the entries never recorded",
    ([a]) => [["UPDATE receipts SET request_id = 'req_other' WHERE receipt_id = ?", a]],
  ],
  [
    "an execution id entry edited",
    ([, , , d]) => [
      ["UPDATE chain SET data = '{\"execution_id\":\"exe_x\"}' WHERE receipt_id = ? AND type = 'execution_id'", d],
    ],
  ],
  [
    "a link of the wrong length",
    () => [
      ["UPDATE chain SET link = link || '0' WHERE seq = (SELECT max(seq) FROM chain)"],
      ["UPDATE chain_head SET link = link || '0'"],
    ],
  ],
];

describe("the fast path against the entry-by-entry verifier", () => {
  it("an untouched store: the same report, on one thread and on two", async () => {
    populate(t.open());
    const { fast, entries } = bothWays(t.file);
    expect(entries.intact).toBe(true);
    expect(fast).toEqual(entries);
    expect(await onThreads(t.file, 2)).toEqual(entries);
  });

  it("an answer that names its backend boot (a later column, hashed only when set): the same report", async () => {
    const store = t.open();
    populate(store);
    const id = store.createForDispatch(newReceipt()).receipt_id;
    store.recordObservation(id, "answer", answerOf({ outcome: "succeeded", exit_code: 0, boot: "boot-1" }, "exe_b"), {
      attempt: 1,
    });
    expect(t.all("SELECT count(*) AS n FROM observations WHERE boot = 'boot-1'")).toEqual([{ n: 1 }]);
    const { fast, entries } = bothWays(t.file);
    expect(entries.intact).toBe(true);
    expect(fast).toEqual(entries);
  });

  it("a definitive answer, then a later observation that is not: the same report (the definitive one decides)", async () => {
    const store = t.open();
    const [a] = populate(store);
    store.recordObservation(a!, "refresh", deadlineAnswer(), {});
    const last = t.all(
      "SELECT classification, definitive FROM observations WHERE receipt_id = ? ORDER BY id DESC LIMIT 1",
      a,
    );
    expect(last).toEqual([{ classification: "local_timeout", definitive: 0 }]);
    const { fast, entries } = bothWays(t.file);
    expect(entries.intact).toBe(true);
    expect(fast).toEqual(entries);
    expect(await onThreads(t.file, 2)).toEqual(entries);
    // The row given the later observation's classification: found, and nothing proved.
    t.sql("UPDATE receipts SET classification = 'local_timeout' WHERE receipt_id = ?", a);
    const changed = bothWays(t.file);
    expect(changed.entries.intact).toBe(false);
    expect(changed.fast).toBeNull();
  });

  it("an observation's id made 0 or negative, its entry naming it: nothing proved", () => {
    const [, b] = populate(t.open());
    for (const id of [0, -7]) {
      t.sql("UPDATE observations SET id = ? WHERE id = (SELECT max(id) FROM observations WHERE receipt_id = ?)", id, b);
      t.sql(
        "UPDATE chain SET ref = ? WHERE receipt_id = ? AND type = 'observation' AND seq = (SELECT max(seq) FROM chain WHERE receipt_id = ? AND type = 'observation')",
        id,
        b,
        b,
      );
      const { fast, entries } = bothWays(t.file);
      if (fast !== null) expect(fast).toEqual(entries);
      expect(fast).toBeNull();
    }
  });

  it("a pruned store: the same report, the prune said", async () => {
    const store = t.open();
    populate(store);
    store.prune("2026-03-01T10:00:01.500Z", { keep: ["local_timeout"] });
    const { fast, entries } = bothWays(t.file);
    expect(entries.intact).toBe(true);
    expect(entries.pruned).toHaveLength(1);
    expect(fast).toEqual(entries);
    expect(await onThreads(t.file, 3)).toEqual(entries);
  });

  it("a change verify.ts does not count (a prev given to a store entry, which its link never covers): the same report", async () => {
    populate(t.open());
    t.sql("UPDATE chain SET prev = 2 WHERE receipt_id = '' AND seq = 1");
    const { fast, entries } = bothWays(t.file);
    expect(fast).toEqual(entries);
  });

  it.each(TAMPERS)(
    "%s: verify.ts finds it, the fast path proves nothing, threads give verify.ts's report",
    async (_, tamper) => {
      const ids = populate(t.open());
      for (const [sql, ...params] of tamper(ids)) t.sql(sql, ...params);
      const { fast, entries } = bothWays(t.file);
      expect(entries.intact).toBe(false);
      expect(fast).toBeNull();
      expect(await onThreads(t.file, 2)).toEqual(entries);
    },
  );
});

// verifyStore falls back to one thread whenever threads cannot be used, with the same
// report: these prove the threads themselves run, in the layouts sbx ships.
describe("the threads", () => {
  it("prove an untouched store on threads of their own (not by falling back), and prove nothing of a tampered one", async () => {
    const ids = populate(t.open());
    const db = openDatabase(t.file);
    try {
      expect(await verifyOnThreads(db, { file: t.file, busyTimeoutMs: 1000 }, 2)).toEqual(bothWays(t.file).entries);
      t.sql("UPDATE observations SET stdout = 'bye' WHERE receipt_id = ?", ids[0]);
      expect(await verifyOnThreads(db, { file: t.file, busyTimeoutMs: 1000 }, 2)).toBeNull();
    } finally {
      db.close();
    }
  });

  it("start from the Node bundle, where the thread's script is an entry of its own beside the chunks", async () => {
    const script = path.join(REPO_ROOT, "dist", "node", "verify-worker.cjs");
    expect(fs.existsSync(script), `${script} (scripts/bundle-node.mjs)`).toBe(true);
    populate(t.open());
    const worker = new Worker(script, { workerData: { file: t.file, busyTimeoutMs: 1000 } });
    const [first] = await once(worker, "message");
    expect(first).toEqual({ type: "open" });
    worker.postMessage({ type: "end" });
    await once(worker, "exit");
  });
});
