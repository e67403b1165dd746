// Verify's fast path (src/receipts/verify-fast.ts) decides from sums over the whole
// store rather than receipt by receipt; this holds it to the entry-by-entry verifier
// (verify.ts) on stores tampered at random: a real store with every kind of entry (a
// pre-chain receipt's seal, attempts, observations, an execution id, a later column set,
// two prunes), then a few random changes made with SQLite directly — a column of any
// row set to another row's value, to its neighbour's, or to a value of another type;
// rows deleted or copied. Whatever the change, the fast path gives exactly verify.ts's
// report or proves nothing (never "intact" where verify.ts finds a problem). The seed
// of each case is in its failure message.

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { seededRandom } from "../../src/common/seeded-random.js";
import { openDatabase } from "../../src/platform/sqlite.js";
import { jsonObjectSql } from "../../src/receipts/verify-fast-sql.js";
import { verifyStore } from "../../src/receipts/verify-store.js";
import { bridgeGap, type ChainRow, readStoreEntries } from "../../src/receipts/verify.js";
import {
  ATTEMPT_FIELDS,
  chainLink,
  type EntryType,
  envelope,
  OBSERVATION_FIELDS,
  REQUEST_FIELDS,
  rowData,
  sealData,
  ZERO_LINK,
} from "../../src/receipts/chain.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { answerOf, bothWays, newReceipt, populate, succeededAnswer } from "../support/receipt-store.js";
import { tempDir } from "../support/temp.js";

const TABLES = ["receipts", "attempts", "observations", "chain", "chain_head"] as const;

/** One random change to the store, said in words; nothing when it could not be made (a key taken). */
function tamper(db: Database.Database, rnd: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const table = pick(TABLES);
  const rowids = (db.prepare(`SELECT rowid FROM ${table}`).pluck().all() as number[]).sort((x, y) => x - y);
  if (rowids.length === 0) return `nothing (${table} is empty)`;
  const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
  const rowid = pick(rowids);
  const op = rnd();
  try {
    if (op < 0.12) {
      db.prepare(`DELETE FROM ${table} WHERE rowid = ?`).run(rowid);
      return `deleted ${table} row ${rowid}`;
    }
    if (op < 0.2) {
      // A copy of a row, its key changed where it must be unique.
      const row = db.prepare(`SELECT * FROM ${table} WHERE rowid = ?`).get(rowid) as Record<string, unknown>;
      const key = { receipts: "receipt_id", attempts: "attempt", observations: "id", chain: "seq", chain_head: "one" }[
        table
      ];
      const max = db.prepare(`SELECT max(rowid) FROM ${table}`).pluck().get() as number;
      if (table === "receipts") row[key] = `rcp_copy${rowid}`;
      else if (table === "attempts") row[key] = Number(row[key]) + 5;
      else if (table === "chain" && rnd() < 0.5) row[key] = max + 1;
      else row[key] = table === "chain" ? 0 : max + 1;
      const cols = Object.keys(row);
      db.prepare(`INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(
        ...cols.map((c) => row[c]),
      );
      return `copied ${table} row ${rowid} with ${key} ${String(row[key])}`;
    }
    const column = pick(columns);
    const values = db.prepare(`SELECT ${column} FROM ${table}`).pluck().all() as unknown[];
    const current = db.prepare(`SELECT ${column} FROM ${table} WHERE rowid = ?`).pluck().get(rowid);
    const kind = rnd();
    let value: unknown;
    let said: string;
    if (kind < 0.15) {
      value = current;
      said = "its own value";
    } else if (kind < 0.55) {
      value = pick(values);
      said = "another row's value";
    } else if (kind < 0.7) {
      const neighbour = rowids[rowids.indexOf(rowid) + 1] ?? rowids[0];
      value = db.prepare(`SELECT ${column} FROM ${table} WHERE rowid = ?`).pluck().get(neighbour);
      said = `row ${neighbour}'s value`;
    } else if (kind < 0.78) {
      value = typeof current === "number" ? current + (rnd() < 0.5 ? 1 : -1) : null;
      said = "one more or less, or null";
    } else {
      value = pick<unknown>([null, 0, 1, 2, -1, 1.5, "x", "", "1", "a\nb", Buffer.from("x"), `${String(current)} `]);
      said = "a value of its own";
    }
    db.prepare(`UPDATE ${table} SET ${column} = ? WHERE rowid = ?`).run(value as never, rowid);
    return `${table} row ${rowid}: ${column} set to ${said} (${JSON.stringify(
      Buffer.isBuffer(value) ? `blob ${value.toString("hex")}` : value,
    )})`;
  } catch (err) {
    return `nothing (${(err as Error).message})`;
  }
}

type Row = Record<string, unknown>;

/**
 * What a forger who knows docs/receipt-chain.md does after changing rows: every link
 * computed again from the rows as they now are, from the first position on, and the
 * head moved to the last. Only what verify checks besides links can find the change then.
 */
function relink(db: Database.Database, keep: ReadonlySet<number> = new Set()): void {
  const chain = db.prepare("SELECT * FROM chain ORDER BY seq").all() as ChainRow[];
  const { gapsByFirst } = readStoreEntries(chain);
  const receipt = db.prepare("SELECT * FROM receipts WHERE receipt_id = ?");
  const attempts = db.prepare("SELECT * FROM attempts WHERE receipt_id = ? ORDER BY attempt");
  const observations = db.prepare("SELECT * FROM observations WHERE receipt_id = ? ORDER BY id");
  const links = new Map<number, string>();
  let before = ZERO_LINK;
  let last = 0;
  for (const row of chain) {
    if (row.seq > last + 1) {
      const bridged = bridgeGap(last + 1, row.seq - 1, gapsByFirst);
      if (typeof bridged === "string") before = bridged;
    }
    const id = row.receipt_id;
    const entries = chain.filter((r) => r.receipt_id === id);
    const request = receipt.get(id) as Row | undefined;
    const atts = attempts.all(id) as Row[];
    const obs = observations.all(id) as Row[];
    let data: string | undefined;
    if (id === "") data = row.data ?? undefined;
    else if (row.type === "request") data = request && rowData(request, REQUEST_FIELDS);
    else if (row.type === "attempt") {
      const a = atts.find((x) => Number(x.attempt) === row.ref);
      data = a && rowData(a, ATTEMPT_FIELDS);
    } else if (row.type === "observation") {
      const o = obs.find((x) => Number(x.id) === row.ref);
      data = o && rowData(o, OBSERVATION_FIELDS);
    } else if (row.type === "execution_id") data = row.data ?? undefined;
    else if (row.type === "seal" && request) {
      const chained = (type: string, n: unknown) => entries.some((r) => r.type === type && r.ref === Number(n));
      data = sealData(
        request,
        atts.filter((a) => !chained("attempt", a.attempt)),
        obs.filter((o) => !chained("observation", o.id)),
      );
    }
    const prev = id === "" || row.prev === null ? null : links.get(row.prev);
    let link = String(row.link);
    if (data !== undefined && prev !== undefined && !keep.has(row.seq)) {
      link = chainLink(before, envelope(row.type as EntryType, id, prev, data));
      db.prepare("UPDATE chain SET link = ? WHERE seq = ?").run(link, row.seq);
    }
    links.set(row.seq, link);
    before = link;
    last = row.seq;
  }
  db.prepare("UPDATE chain_head SET seq = ?, link = ?").run(last, before);
}

let dir: string;
let template: string;

beforeAll(() => {
  dir = tempDir("sbx-verify-agree-");
  template = path.join(dir, "template.db");
  // A store of schema 4 (a pre-chain receipt's seal, entries after it, an execution id, a prune), migrated.
  fs.copyFileSync(path.join(import.meta.dirname, "..", "fixtures", "receipts-v4.db"), template);
  const store = ReceiptStore.open(template);
  try {
    // Two receipts before the fixture's, one of them pruned below.
    populate(store, new Date("2026-11-01T10:00:00.000Z"));
    populate(store, new Date("2026-12-01T10:00:00.000Z"));
    // Two receipts whose entries interleave: both sent, then both answered.
    const x = store.createForDispatch(newReceipt()).receipt_id;
    const y = store.createForDispatch(newReceipt()).receipt_id;
    store.recordObservation(x, "answer", succeededAnswer("exe_x"), { attempt: 1 });
    store.recordObservation(y, "answer", answerOf({ outcome: "succeeded", exit_code: 0, boot: "boot-1" }, "exe_y"), {
      attempt: 1,
    });
    store.prune("2026-11-01T10:00:01.500Z", { keep: ["local_timeout"] });
  } finally {
    store.close();
  }
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("the fast path and the entry-by-entry verifier agree on randomly tampered stores", () => {
  it("the store tampered with verifies intact both ways, with the same report", () => {
    const { fast, entries } = bothWays(template);
    expect(entries).toMatchObject({ intact: true, pre_chain: { receipts: 2 } });
    expect(entries.pruned).toHaveLength(2);
    expect(fast).toEqual(entries);
  });

  it("160 cases of one to three random changes: the same report, or nothing proved", () => {
    let proved = 0;
    let found = 0;
    for (let seed = 1; seed <= 160; seed++) {
      const file = path.join(dir, `case-${seed}.db`);
      fs.copyFileSync(template, file);
      const rnd = seededRandom(seed);
      const db = new Database(file);
      const changes: string[] = [];
      try {
        const n = 1 + Math.floor(rnd() * 3);
        for (let i = 0; i < n; i++) changes.push(tamper(db, rnd));
        // Half the cases as a forger would leave them: every link computed again.
        if (seed % 2 === 0) {
          relink(db);
          changes.push("every link computed again");
        }
      } finally {
        db.close();
      }
      const { fast, entries } = bothWays(file);
      if (fast !== null) {
        expect(fast, `seed ${seed}: ${changes.join("; ")}`).toEqual(entries);
        proved++;
      }
      if (!entries.intact) found++;
      fs.rmSync(file);
    }
    // Neither side vacuous: most changes are found, and changes that change nothing are proved.
    expect(found).toBeGreaterThan(60);
    expect(proved).toBeGreaterThan(20);
  });

  it("on two threads too (a few cases): the report verify.ts gives", async () => {
    for (let seed = 1001; seed <= 1006; seed++) {
      const file = path.join(dir, `threads-${seed}.db`);
      fs.copyFileSync(template, file);
      const rnd = seededRandom(seed);
      const raw = new Database(file);
      const change = tamper(raw, rnd);
      raw.close();
      const { entries } = bothWays(file);
      const db = openDatabase(file);
      try {
        expect(await verifyStore(db, { file, threads: 2 }), `seed ${seed}: ${change}`).toEqual(entries);
      } finally {
        db.close();
      }
    }
  });
});

/** A copy of the template changed by `change` with SQLite, then relinked as a forger would. */
function forged(name: string, change: (db: Database.Database) => void): string {
  const file = path.join(dir, `${name}.db`);
  fs.copyFileSync(template, file);
  const db = new Database(file);
  try {
    change(db);
    relink(db);
  } finally {
    db.close();
  }
  return file;
}

const chainOf = (db: Database.Database) => db.prepare("SELECT * FROM chain ORDER BY seq").all() as ChainRow[];

/** Appends an entry to a receipt's chain (its link made by relink). */
function appendEntry(db: Database.Database, receiptId: string, type: string, ref: number | null): void {
  const chain = chainOf(db);
  const last = chain.filter((r) => r.receipt_id === receiptId).at(-1)!;
  db.prepare("INSERT INTO chain (seq, receipt_id, type, ref, prev, data, link) VALUES (?, ?, ?, ?, ?, NULL, '')").run(
    chain.at(-1)!.seq + 1,
    receiptId,
    type,
    ref,
    last.seq,
  );
}

/** Inserts an observation no entry covers, a copy of one of the receipt's. */
function forgeObservation(db: Database.Database, receiptId: string): void {
  db.prepare(
    `INSERT INTO observations (receipt_id, attempt, source, at, classification, definitive, http_status, execution_id,
       outcome, exit_code, stdout, stderr)
     SELECT receipt_id, attempt, 'refresh', at, classification, definitive, http_status, execution_id, outcome, exit_code,
       'forged', stderr FROM observations WHERE receipt_id = ? ORDER BY id DESC LIMIT 1`,
  ).run(receiptId);
}

// Each condition fastReport adds up, broken by a forger who then computes every link
// again (so that no link gives it away): verify.ts names the change, and the fast path
// proves nothing. (Random changes seldom break one condition alone.)
describe("a forger who computes every link again", () => {
  const expectFound = (file: string) => {
    const { fast, entries } = bothWays(file);
    expect(entries.intact).toBe(false);
    expect(fast).toBeNull();
  };

  it("relinking alone changes nothing: the store stays intact both ways", () => {
    const file = forged("relinked", () => {});
    const { fast, entries } = bothWays(file);
    expect(entries.intact).toBe(true);
    expect(fast).toEqual(entries);
  });

  it("an entry that names an earlier entry of its receipt, not the one right before it", () => {
    expectFound(
      forged("skipped", (db) => {
        const entries = chainOf(db).filter((r) => r.receipt_id !== "");
        const rows = entries.filter((r) => r.receipt_id === entries.find((e) => e.type === "execution_id")!.receipt_id);
        db.prepare("UPDATE chain SET prev = ? WHERE seq = ?").run(rows[0]!.seq, rows[2]!.seq);
      }),
    );
  });

  it("two receipts' entries that name each other's entry before them (the sums unchanged)", () => {
    expectFound(
      forged("crossed", (db) => {
        const rows = chainOf(db).filter((r) => r.receipt_id !== "" && r.prev !== null);
        const pair = rows
          .flatMap((x) => rows.map((y) => [x, y] as const))
          .find(([x, y]) => x.receipt_id !== y.receipt_id && y.prev! < x.seq && x.prev! < y.seq)!;
        const [x, y] = pair;
        db.prepare("UPDATE chain SET prev = ? WHERE seq = ?").run(y.prev, x.seq);
        db.prepare("UPDATE chain SET prev = ? WHERE seq = ?").run(x.prev, y.seq);
      }),
    );
  });

  it("an observation entered twice, hiding a forged observation no entry covers", () => {
    expectFound(
      forged("twice", (db) => {
        const o = db.prepare("SELECT id, receipt_id FROM observations ORDER BY id DESC LIMIT 1").get() as {
          id: number;
          receipt_id: string;
        };
        appendEntry(db, o.receipt_id, "observation", o.id);
        forgeObservation(db, o.receipt_id);
      }),
    );
  });

  it("a second seal of a pre-chain receipt, hiding as many forged attempts and observations as it covers", () => {
    expectFound(
      forged("sealed-twice", (db) => {
        const seal = chainOf(db).find((r) => r.type === "seal")!;
        const unchained = (table: string, key: string, type: string) =>
          db
            .prepare(
              `SELECT count(*) FROM ${table} t WHERE t.receipt_id = ? AND NOT EXISTS
                 (SELECT 1 FROM chain x WHERE x.receipt_id = t.receipt_id AND x.type = '${type}' AND x.ref = t.${key})`,
            )
            .pluck()
            .get(seal.receipt_id) as number;
        const observations = unchained("observations", "id", "observation");
        const attempts = unchained("attempts", "attempt", "attempt");
        expect(observations + attempts).toBeGreaterThan(0);
        appendEntry(db, seal.receipt_id, "seal", null);
        const other = db
          .prepare("SELECT receipt_id FROM receipts WHERE receipt_id <> ? LIMIT 1")
          .pluck()
          .get(seal.receipt_id) as string;
        for (let i = 0; i < observations; i++) forgeObservation(db, other);
        for (let i = 0; i < attempts; i++) {
          db.prepare(
            `INSERT INTO attempts (receipt_id, attempt, dispatched_at, body_sha256, pid)
             SELECT receipt_id, attempt + 10 + ?, dispatched_at, body_sha256, pid FROM attempts WHERE receipt_id = ? LIMIT 1`,
          ).run(i, other);
        }
      }),
    );
  });

  it("an output that is not UTF-8, its link computed over its bytes as SQLite keeps them", () => {
    const file = path.join(dir, "not-utf8.db");
    fs.copyFileSync(template, file);
    const db = new Database(file);
    try {
      const entry = chainOf(db).findLast((r) => r.type === "observation")!;
      db.prepare("UPDATE observations SET stdout = CAST(x'6869ff0a' AS TEXT) WHERE id = ?").run(entry.ref);
      const data = db
        .prepare(`SELECT CAST(${jsonObjectSql(OBSERVATION_FIELDS)} AS BLOB) FROM observations WHERE id = ?`)
        .pluck()
        .get(entry.ref) as Buffer;
      const link = (seq: number) => db.prepare("SELECT link FROM chain WHERE seq = ?").pluck().get(seq) as string;
      const bytes = Buffer.concat([
        Buffer.from(`${link(entry.seq - 1)}{"data":`),
        data,
        Buffer.from(
          `,"prev":"${link(entry.prev!)}","receipt_id":${JSON.stringify(entry.receipt_id)},"type":"observation","v":1}`,
        ),
      ]);
      db.prepare("UPDATE chain SET link = ? WHERE seq = ?").run(
        createHash("sha256").update(bytes).digest("hex"),
        entry.seq,
      );
      relink(db, new Set([entry.seq]));
    } finally {
      db.close();
    }
    expectFound(file);
  });
});
