// The receipt chain on a real store: every tamper done with SQLite directly on the
// file (a second connection, as anyone with access to it could) is detected and
// named — which receipt, which entry, what kind of change — and a prune is told
// apart from a deletion.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ATTEMPT_FIELDS,
  canonicalJson,
  chainLink,
  envelope,
  type Json,
  LATER_FIELDS,
  OBSERVATION_FIELDS,
  REQUEST_FIELDS,
  rowData,
  ZERO_LINK,
} from "../../src/receipts/chain.js";
import type { ReceiptStore } from "../../src/receipts/store.js";
import { REPO_ROOT } from "../support/cli.js";
import { itNeeding } from "../support/requirements.js";
import { newReceipt, populate, succeededAnswer, type TempStore, tempStore } from "../support/receipt-store.js";

let t: TempStore;
beforeEach(() => {
  t = tempStore();
});
afterEach(() => t.remove());

const problemsOf = async (store: ReceiptStore) =>
  (await store.verify()).problems.map((p) => ({ kind: p.kind, receipt_id: p.receipt_id, entry: p.entry }));

describe("the encoding", () => {
  it("is RFC 8785 for what entries hold: keys sorted, no spaces, JSON.stringify's strings", async () => {
    expect(canonicalJson({ b: 1, a: [null, "x\n\u0001é", true], "": { z: 0, y: -1.5 } })).toBe(
      '{"":{"y":-1.5,"z":0},"a":[null,"x\\n\\u0001é",true],"b":1}',
    );
  });

  it("the data of a row is what canonicalJson writes for its named columns", async () => {
    const row = { stdout: "x\n\u0001é", attempt: 1, at: "t", definitive: 0, exit_code: null, extra: "not hashed" };
    const picked = Object.fromEntries(OBSERVATION_FIELDS.map((f) => [f, (row as Record<string, unknown>)[f] ?? null]));
    // A field added after the chain began is left out while null (what entries hashed before it had).
    for (const f of LATER_FIELDS) delete picked[f];
    expect(rowData(row, OBSERVATION_FIELDS)).toBe(canonicalJson(picked as Json));
    expect(rowData({ ...row, boot: "boot_1" }, OBSERVATION_FIELDS)).toBe(
      canonicalJson({ ...picked, boot: "boot_1" } as Json),
    );
    expect([...OBSERVATION_FIELDS].sort()).toEqual([...OBSERVATION_FIELDS]);
    expect([...REQUEST_FIELDS].sort()).toEqual([...REQUEST_FIELDS]);
    expect([...ATTEMPT_FIELDS].sort()).toEqual([...ATTEMPT_FIELDS]);
  });

  it("a link is SHA-256 of the previous link's hex followed by the canonical envelope", async () => {
    // The same bytes computed by hand, as docs/receipt-chain.md tells another tool to.
    const env = envelope("execution_id", "rcp_1", "ab".repeat(32), canonicalJson({ execution_id: "exe_1" }));
    expect(env).toBe(
      `{"data":{"execution_id":"exe_1"},"prev":"${"ab".repeat(32)}","receipt_id":"rcp_1","type":"execution_id","v":1}`,
    );
    expect(env).toBe(
      canonicalJson({
        data: { execution_id: "exe_1" },
        prev: "ab".repeat(32),
        receipt_id: "rcp_1",
        type: "execution_id",
        v: 1,
      }),
    );
    expect(chainLink(ZERO_LINK, env)).toBe(
      createHash("sha256")
        .update(ZERO_LINK + env)
        .digest("hex"),
    );
  });
});

describe("an untouched store", () => {
  it("verifies intact: every receipt, every entry, the head", async () => {
    const store = t.open();
    const ids = populate(store);
    const report = await t.open().verify();
    expect(report.problems).toEqual([]);
    expect(report.intact).toBe(true);
    expect(report.receipts).toBe(ids.length);
    // genesis + (request, attempt, dispatch) × 4 + answers 1+2+1+2 + (attempt, dispatch) + execution id
    expect(report.entries).toBe(1 + 12 + 6 + 2 + 1);
    expect(report.head?.seq).toBe(report.entries);
    expect(report.pre_chain.receipts).toBe(0);
  });

  it("an execution id already known is not recorded twice", async () => {
    const store = t.open();
    const id = store.createForDispatch(newReceipt()).receipt_id;
    store.recordObservation(id, "answer", succeededAnswer("exe_x"), { attempt: 1 });
    store.noteExecutionId(id, "exe_x");
    expect(t.all("SELECT type FROM chain WHERE receipt_id = ?", id).map((r) => r.type)).toEqual([
      "request",
      "attempt",
      "observation",
      "observation",
    ]);
  });
});

describe("each tamper, done with SQLite directly, is detected and named", () => {
  it("a changed body", async () => {
    const [a] = populate(t.open());
    t.sql("UPDATE receipts SET body = ? WHERE receipt_id = ?", Buffer.from('{"command":["rm","-rf","/"]}'), a);
    expect(await problemsOf(t.open())).toEqual([{ kind: "changed", receipt_id: a, entry: "request body" }]);
  });

  it("a changed body with its sha256 recomputed: the request itself no longer matches", async () => {
    const [a] = populate(t.open());
    const body = Buffer.from('{"command":["rm","-rf","/"]}');
    const sha = createHash("sha256").update(body).digest("hex");
    t.sql("UPDATE receipts SET body = ?, body_sha256 = ? WHERE receipt_id = ?", body, sha, a);
    const problems = (await t.open().verify()).problems;
    expect(problems.map((p) => [p.kind, p.receipt_id, p.entry])).toEqual([["changed", a, "request"]]);
    expect(problems[0]!.position).toBe(2);
    expect(problems[0]!.detail).toBe("request (position 2) was changed: it no longer matches what was recorded");
  });

  it("a changed observation (what the command printed)", async () => {
    const [, b] = populate(t.open());
    t.sql(
      "UPDATE observations SET stdout = 'all good' WHERE id = (SELECT MIN(id) FROM observations WHERE receipt_id = ? AND source = 'answer')",
      b,
    );
    expect(await problemsOf(t.open())).toEqual([{ kind: "changed", receipt_id: b, entry: "observation 2 (answer)" }]);
  });

  it("an outcome rewritten, and the receipt's classification with it", async () => {
    const [, , c] = populate(t.open());
    t.sql(
      "UPDATE observations SET classification = 'succeeded', definitive = 1 WHERE receipt_id = ? AND source = 'answer'",
      c,
    );
    t.sql("UPDATE receipts SET classification = 'succeeded' WHERE receipt_id = ?", c);
    expect(await problemsOf(t.open())).toEqual([{ kind: "changed", receipt_id: c, entry: "observation 2 (answer)" }]);
  });

  it("a classification changed alone (what prune and list go by)", async () => {
    const [, , c] = populate(t.open());
    t.sql("UPDATE receipts SET classification = 'succeeded' WHERE receipt_id = ?", c);
    const [p] = (await t.open().verify()).problems;
    expect(p).toMatchObject({ kind: "changed", receipt_id: c, entry: "classification" });
    expect(p!.detail).toBe("the receipt says succeeded but its recorded observations say local_timeout");
  });

  it("a deleted observation", async () => {
    const [, b] = populate(t.open());
    t.sql("DELETE FROM observations WHERE receipt_id = ? AND source = 'refresh'", b);
    const problems = (await t.open().verify()).problems;
    expect(problems.map((p) => [p.kind, p.receipt_id, p.entry])).toEqual([["deleted", b, "observation 3"]]);
    expect(problems[0]!.detail).toMatch(/^observation 3 \(position \d+\) was deleted$/);
  });

  it("a deleted receipt (its attempts and observations go with it)", async () => {
    const [a] = populate(t.open());
    t.sql("DELETE FROM receipts WHERE receipt_id = ?", a);
    expect(t.all("SELECT * FROM observations WHERE receipt_id = ?", a)).toEqual([]);
    const problems = (await t.open().verify()).problems;
    expect(problems.map((p) => [p.kind, p.receipt_id])).toEqual([["deleted", a]]);
    expect(problems[0]!.detail).toBe("the receipt was deleted: its request (position 2) is gone");
  });

  it("a deleted receipt without its rows (foreign keys off, as the sqlite3 shell has them)", async () => {
    const [a] = populate(t.open());
    t.sql(`PRAGMA foreign_keys = OFF; DELETE FROM receipts WHERE receipt_id = '${a}'`);
    const problems = (await t.open().verify()).problems;
    expect(problems.map((p) => [p.kind, p.receipt_id])).toEqual([["deleted", a]]);
    expect(problems[0]!.detail).toBe(
      "the receipt was deleted: its request (position 2) is gone; 3 of its attempts and observations remain",
    );
  });

  it("a deleted receipt with its chain entries: the positions are missing, and no prune explains them", async () => {
    const [, b] = populate(t.open());
    t.sql("DELETE FROM chain WHERE receipt_id = ?", b);
    t.sql("DELETE FROM receipts WHERE receipt_id = ?", b);
    const problems = (await t.open().verify()).problems;
    expect(problems.map((p) => [p.kind, p.receipt_id, p.position])).toEqual([["missing", null, 6]]);
    expect(problems[0]!.detail).toBe(
      "positions 6–10 of the store-wide chain are missing and no prune checkpoint covers them: entries were deleted",
    );
  });

  it("the newest receipt deleted with its chain entries: the head says where the chain ended", async () => {
    const ids = populate(t.open());
    const d = ids[3]!;
    t.sql("DELETE FROM chain WHERE receipt_id = ?", d);
    t.sql("DELETE FROM receipts WHERE receipt_id = ?", d);
    const [p] = (await t.open().verify()).problems;
    expect(p).toMatchObject({ kind: "missing", receipt_id: null, position: 15 });
    expect(p!.detail).toBe(
      "positions 15–22 at the end of the chain are missing (the head records 22): the newest entries were deleted",
    );
  });

  it("two observations swapped (their ids exchanged)", async () => {
    const [, b] = populate(t.open());
    const [x, y] = t
      .all<{ id: number }>("SELECT id FROM observations WHERE receipt_id = ? AND source != 'dispatch' ORDER BY id", b)
      .map((r) => r.id);
    t.sql(`UPDATE observations SET id = -1 WHERE id = ${x}; UPDATE observations SET id = ${x} WHERE id = ${y};
           UPDATE observations SET id = ${y} WHERE id = -1`);
    expect(await problemsOf(t.open())).toEqual([
      { kind: "reordered", receipt_id: b, entry: "observation 2 (refresh)" },
      { kind: "reordered", receipt_id: b, entry: "observation 3 (answer)" },
    ]);
  });

  it("two observations swapped (their contents exchanged)", async () => {
    const ids = populate(t.open());
    const d = ids[3]!;
    const [x, y] = t
      .all<{ id: number }>("SELECT id FROM observations WHERE receipt_id = ? AND source = 'answer' ORDER BY id", d)
      .map((r) => r.id);
    const cols = OBSERVATION_FIELDS.join(", ");
    t.sql(`CREATE TEMP TABLE o AS SELECT * FROM observations WHERE id IN (${x}, ${y});
           UPDATE observations SET (${cols}) = (SELECT ${cols} FROM o WHERE o.id = (${x} + ${y} - observations.id))
           WHERE id IN (${x}, ${y})`);
    const problems = (await t.open().verify()).problems;
    expect(problems.map((p) => [p.kind, p.receipt_id])).toEqual([
      ["reordered", d],
      ["reordered", d],
    ]);
    expect(problems[0]!.detail).toMatch(
      /^observation 2 \(answer\) \(position \d+\) is now the row with id \d+: rows were swapped or renumbered$/,
    );
  });

  it("a forged observation inserted", async () => {
    const [, , c] = populate(t.open());
    t.sql(
      `INSERT INTO observations (receipt_id, attempt, source, at, classification, definitive, outcome, exit_code)
       VALUES (?, 1, 'answer', '2026-03-01T10:00:02.600Z', 'succeeded', 1, 'succeeded', 0)`,
      c,
    );
    const problems = (await t.open().verify()).problems;
    expect(problems.map((p) => [p.kind, p.receipt_id])).toEqual([["inserted", c]]);
    expect(problems[0]!.detail).toMatch(
      /^the observation with id \d+ \(answer, 2026-03-01T10:00:02.600Z\) is not in the chain: it was added outside sbx$/,
    );
  });

  it("a forged observation with a forged chain entry of its own", async () => {
    const [, , c] = populate(t.open());
    t.sql(
      `INSERT INTO observations (receipt_id, attempt, source, at, classification, definitive)
       VALUES (?, 1, 'answer', '2026-03-01T10:00:02.600Z', 'succeeded', 1)`,
      c,
    );
    t.sql(
      `INSERT INTO chain (seq, receipt_id, type, ref, prev, link)
       SELECT (SELECT MAX(seq) + 1 FROM chain), ?, 'observation', (SELECT MAX(id) FROM observations),
              (SELECT seq FROM chain WHERE receipt_id = ? ORDER BY seq DESC LIMIT 1), lower(hex(randomblob(32)))`,
      c,
      c,
    );
    const kinds = (await t.open().verify()).problems.map((p) => [p.kind, p.receipt_id]);
    expect(kinds).toEqual([
      ["inserted", null],
      ["changed", c],
    ]);
  });

  it("a BLOB written where text belongs (verify reads every column itself then)", async () => {
    const [, b] = populate(t.open());
    t.sql("UPDATE observations SET stdout = X'00ff' WHERE receipt_id = ? AND source = 'refresh'", b);
    expect(await problemsOf(t.open())).toEqual([{ kind: "changed", receipt_id: b, entry: "observation 3 (refresh)" }]);
  });

  it("a boot (a later field) verifies where set and where not; setting, changing or clearing one shows", async () => {
    const [a, b] = populate(t.open());
    const store = t.open();
    const e = store.createForDispatch(newReceipt()).receipt_id;
    store.recordObservation(
      e,
      "answer",
      { ...succeededAnswer("exe_e"), boot: "boot_0123456789abcdef" },
      { attempt: 1 },
    );
    expect(store.get(e).observations.map((o) => o.boot)).toEqual([null, "boot_0123456789abcdef"]);
    expect((await t.open().verify()).problems).toEqual([]);
    const fresh = tempStore();
    try {
      populate(fresh.open());
      // Entries hashed with no boot keep their links once the column is there (the store
      // was made with it; the entries' data leaves it out while it is null).
      expect(fresh.all("SELECT data FROM chain WHERE data LIKE '%boot%'")).toEqual([]);
    } finally {
      fresh.remove();
    }
    t.sql("UPDATE observations SET boot = 'boot_x' WHERE receipt_id = ? AND source = 'answer'", a);
    t.sql("UPDATE observations SET boot = NULL WHERE receipt_id = ? AND source = 'answer'", e);
    t.sql("UPDATE observations SET boot = 'boot_y' WHERE receipt_id = ? AND source = 'refresh'", b);
    expect(await problemsOf(t.open())).toEqual([
      { kind: "changed", receipt_id: a, entry: "observation 2 (answer)" },
      { kind: "changed", receipt_id: b, entry: "observation 3 (refresh)" },
      { kind: "changed", receipt_id: e, entry: "observation 2 (answer)" },
    ]);
  });

  it("text that needs escaping verifies: SQLite's JSON and canonical JSON agree on it", async () => {
    const store = t.open();
    const tricky = `\u0000\u0001\b\t\n\f\r\u001f"\\/ é ☃ 😀 \u007f\u2028\u2029 </script>`;
    const id = store.createForDispatch(newReceipt({ profile: tricky, sandbox: tricky })).receipt_id;
    store.recordObservation(id, "answer", succeededAnswer("exe_t", tricky), { attempt: 1 });
    expect((await t.open().verify()).problems).toEqual([]);
    const [encoded] = t.all<{ d: string }>(
      "SELECT json_object('stdout', stdout) AS d FROM observations WHERE receipt_id = ? AND source = 'answer'",
      id,
    );
    expect(encoded!.d).toBe(canonicalJson({ stdout: tricky }));
  });

  it("a forged receipt inserted whole", async () => {
    populate(t.open());
    t.sql(`INSERT INTO receipts (receipt_id, kind, profile, api_url, sandbox_id, idempotency_key, method, path, body,
             body_sha256, created_at, classification)
           VALUES ('rcp_forged', 'execute', '', 'x', 'default', 'k', 'POST', '/', X'00', 'x', '2026-03-01', 'succeeded')`);
    expect(await problemsOf(t.open())).toEqual([{ kind: "inserted", receipt_id: "rcp_forged", entry: null }]);
  });

  it("a link edited in place: that position and the next no longer follow", async () => {
    const [a] = populate(t.open());
    t.sql("UPDATE chain SET link = lower(hex(randomblob(32))) WHERE seq = 3");
    const problems = (await t.open().verify()).problems;
    expect(problems.map((p) => [p.kind, p.receipt_id, p.entry, p.position])).toEqual([
      ["changed", a, "attempt 1", 3],
      ["changed", a, "observation 1 (dispatch)", 4],
    ]);
  });

  it.each([
    ["a link that is a number", "UPDATE chain SET link = 42 WHERE seq = 5"],
    ["a link that is a BLOB", "UPDATE chain SET link = randomblob(32) WHERE seq = 5"],
    ["an entry type sbx never writes", "UPDATE chain SET type = 'rumour' WHERE seq = 5"],
    ["a previous position that is text", "UPDATE chain SET prev = 'four' WHERE seq = 5"],
    ["a reference that is text", "UPDATE chain SET ref = 'x' WHERE seq = 5"],
    ["a receipt id that is a number", "UPDATE chain SET receipt_id = 7 WHERE seq = 5"],
    ["a genesis whose data is not JSON", "UPDATE chain SET data = '{' WHERE seq = 1"],
    ["positions renumbered", "UPDATE chain SET seq = seq + 1000 WHERE seq > 10"],
    ["the head gone", "DELETE FROM chain_head"],
    ["the whole chain gone", "DELETE FROM chain"],
  ])("%s: named, never a crash", async (_, sql) => {
    populate(t.open());
    t.sql(sql);
    const report = await t.open().verify();
    expect(report.intact).toBe(false);
    expect(report.problems.length).toBeGreaterThan(0);
  });

  it("only the receipts asked about are reported by verify of those ids", async () => {
    const [a, b] = populate(t.open());
    t.sql("DELETE FROM observations WHERE receipt_id = ? AND source = 'refresh'", b);
    const report = await t.open().verify();
    expect(report.problems.filter((p) => p.receipt_id === a)).toEqual([]);
  });
});

describe("prune leaves a checkpoint", () => {
  it("a pruned store verifies as pruned, not as tampered", async () => {
    const store = t.open();
    const [a, b, c, d] = populate(store);
    // a and b settled before the cut; c is in doubt and kept; d is newer.
    expect(store.prune("2026-03-01T10:00:01.500Z", { keep: ["local_timeout"] })).toEqual({ deleted: 2, kept: 0 });
    const report = await t.open().verify();
    expect(report.problems).toEqual([]);
    expect(report.intact).toBe(true);
    expect(report.pruned).toEqual([
      expect.objectContaining({
        before: "2026-03-01T10:00:01.500Z",
        receipts: 2,
        entries: 9,
        gaps: [expect.objectContaining({ first: 2, last: 10 })],
      }),
    ]);
    expect(t.all("SELECT receipt_id FROM receipts ORDER BY created_at").map((r) => r.receipt_id)).toEqual([c, d]);
    void a;
    void b;
  });

  it("prunes around receipts kept in doubt, twice: each run of positions bridged", async () => {
    const store = t.open();
    const ids = populate(store);
    populate(store, new Date("2026-03-02T10:00:00.000Z"));
    store.prune("2026-03-01T12:00:00.000Z", { keep: ["local_timeout"] });
    store.prune("2026-03-02T12:00:00.000Z", { keep: ["local_timeout"] });
    const report = await t.open().verify();
    expect(report.problems).toEqual([]);
    expect(report.pruned.map((p) => p.gaps.length)).toEqual([2, 2]);
    expect(t.all("SELECT receipt_id FROM receipts").length).toBe(2);
    expect(ids[2]).toBeDefined();
  });

  it("a deletion after a prune is still a deletion", async () => {
    const store = t.open();
    populate(store);
    const newer = populate(store, new Date("2026-03-02T10:00:00.000Z"));
    store.prune("2026-03-01T12:00:00.000Z");
    t.sql("DELETE FROM observations WHERE receipt_id = ? AND source = 'refresh'", newer[1]);
    expect(await problemsOf(t.open())).toEqual([{ kind: "deleted", receipt_id: newer[1], entry: "observation 3" }]);
  });

  it("a checkpoint cannot be stretched over a deletion: the checkpoint itself no longer matches", async () => {
    const store = t.open();
    populate(store);
    const newer = populate(store, new Date("2026-03-02T10:00:00.000Z"));
    store.prune("2026-03-01T12:00:00.000Z");
    const cp = t.all<{ seq: number; data: string }>("SELECT seq, data FROM chain WHERE type = 'checkpoint'")[0]!;
    const rows = t.all<{ seq: number }>("SELECT seq FROM chain WHERE receipt_id = ? ORDER BY seq", newer[0]);
    const data = JSON.parse(cp.data);
    data.gaps[0].last = rows[rows.length - 1]!.seq;
    t.sql("DELETE FROM chain WHERE receipt_id = ?", newer[0]);
    t.sql("DELETE FROM receipts WHERE receipt_id = ?", newer[0]);
    t.sql("UPDATE chain SET data = ? WHERE seq = ?", JSON.stringify(data), cp.seq);
    const kinds = (await problemsOf(t.open())).map((p) => p.kind);
    expect(kinds).toContain("changed");
  });
});

describe("docs/receipt-chain.md", () => {
  itNeeding("python3", "its Python check, run as written, recomputes an observation's link", () => {
    populate(t.open());
    const page = fs.readFileSync(path.join(REPO_ROOT, "docs", "receipt-chain.md"), "utf8");
    const snippet = /```python\n([\s\S]*?)```/.exec(page)![1]!;
    const r = spawnSync("python3", ["-c", snippet], { cwd: t.dir, encoding: "utf8" });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
  });
});
