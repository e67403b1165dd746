// Proving a receipt store intact in bulk (docs/receipt-chain.md, "How verify is fast").
// Verifying entry by entry in JavaScript (verify.ts) reads ~900,000 rows for 100,000
// receipts, and turning each column into a JavaScript value is most of its time. Here
// SQLite assembles, for a few thousand positions at a time, the exact bytes each link
// was computed over (one BLOB) and the links themselves (one string); JavaScript only
// hashes. What the entry-by-entry verifier checks besides links is asked of SQLite as
// counts of rows that fail. The work comes as independent tasks (position ranges,
// receipt ranges, checks), so that threads can share it (verify-threads.ts).
//
// The contract: this either proves that verify.ts would find nothing wrong in the same
// snapshot, and gives the report it would give, or it proves nothing (any failure,
// any surprise, any SQL error) and the caller verifies entry by entry, which names what
// is wrong. It never names a problem itself. test/unit/receipt-verify-fast.test.ts holds
// it to that over every tamper of test/unit/receipt-chain.test.ts.

import crypto from "node:crypto";
import type { Database } from "../platform/sqlite.js";
import type { ChainHead, PrunedGap } from "./chain-log.js";
import { ATTEMPT_FIELDS, LATER_FIELDS, OBSERVATION_FIELDS, REQUEST_FIELDS, ZERO_LINK } from "./chain.js";
import { bridgeGap, type ChainRow, readStoreEntries, type VerifyReport } from "./verify.js";

/**
 * A row's data (chain.ts: rowData) as SQLite's json_object writes it: integers, text and
 * NULL exactly as canonical JSON does (test/unit/receipt-chain.test.ts compares them).
 * A later field (chain.ts, LATER_FIELDS) is left out while null, as rowData does: one
 * json_object for each case. A BLOB fails the query; a REAL is written otherwise (and
 * so does not verify).
 */
export function jsonObjectSql(fields: readonly string[], alias = ""): string {
  const at = alias === "" ? "" : `${alias}.`;
  const later = fields.filter((f) => LATER_FIELDS.has(f));
  const object = (omit: ReadonlySet<string>) =>
    `json_object(${fields
      .filter((f) => !omit.has(f))
      .map((f) => `'${f}', ${at}${f}`)
      .join(", ")})`;
  const choose = (i: number, omit: ReadonlySet<string>): string => {
    const f = later[i];
    if (f === undefined) return object(omit);
    return `CASE WHEN ${at}${f} IS NULL THEN ${choose(i + 1, new Set([...omit, f]))} ELSE ${choose(i + 1, omit)} END`;
  };
  return choose(0, new Set());
}

/** Whether the entry at c covers an attempt row (a) or observation row (o) of its own receipt. */
const CHAINED_ATTEMPT = `EXISTS (SELECT 1 FROM chain x WHERE x.receipt_id = a.receipt_id AND x.type = 'attempt' AND x.ref = a.attempt)`;
const CHAINED_OBSERVATION = `EXISTS (SELECT 1 FROM chain x WHERE x.receipt_id = o.receipt_id AND x.type = 'observation' AND x.ref = o.id)`;
const SEALED = (alias: string) =>
  `EXISTS (SELECT 1 FROM chain x WHERE x.receipt_id = ${alias}.receipt_id AND x.type = 'seal')`;

const REQUEST_OF_C = `(SELECT ${jsonObjectSql(REQUEST_FIELDS, "r")} FROM receipts r WHERE r.receipt_id = c.receipt_id)`;

/** A seal's data: the attempts and observations no entry covers (in attempt, id order), then the request. */
const SEAL_OF_C = `'{"attempts":[' || coalesce((SELECT group_concat(${jsonObjectSql(ATTEMPT_FIELDS, "a")}, ',' ORDER BY a.attempt)
    FROM attempts a WHERE a.receipt_id = c.receipt_id AND NOT ${CHAINED_ATTEMPT}), '')
  || '],"observations":[' || coalesce((SELECT group_concat(${jsonObjectSql(OBSERVATION_FIELDS, "o")}, ',' ORDER BY o.id)
    FROM observations o WHERE o.receipt_id = c.receipt_id AND NOT ${CHAINED_OBSERVATION}), '')
  || '],"request":' || ${REQUEST_OF_C} || '}'`;

/** The data of the entry at chain row c (chain.ts), NULL where verify.ts would find none. */
const DATA_OF_C = `CASE WHEN c.receipt_id = '' THEN CASE WHEN c.type IN ('genesis', 'checkpoint') THEN c.data END
  ELSE CASE c.type
    WHEN 'request' THEN ${REQUEST_OF_C}
    WHEN 'attempt' THEN (SELECT ${jsonObjectSql(ATTEMPT_FIELDS, "a")} FROM attempts a WHERE a.receipt_id = c.receipt_id AND a.attempt = c.ref)
    WHEN 'observation' THEN (SELECT ${jsonObjectSql(OBSERVATION_FIELDS, "o")} FROM observations o WHERE o.id = c.ref AND o.receipt_id = c.receipt_id)
    WHEN 'execution_id' THEN c.data
    WHEN 'seal' THEN ${SEAL_OF_C}
  END END`;

/**
 * What the link at chain row c was computed over (chain.ts: chainLink of envelope), given
 * the link before it, or '!' (which never hashes to a link) where something is missing.
 * p is the entry c.prev names.
 */
const hashedSql = (before: string) =>
  `coalesce(${before} || '{"data":' || ${DATA_OF_C} || ',"prev":' || CASE WHEN c.receipt_id = '' OR c.prev IS NULL
    THEN 'null' ELSE '"' || p.link || '"' END || ',"receipt_id":' || json_quote(c.receipt_id) || ',"type":"' || c.type || '","v":1}', '!')`;

/** A link as verify.ts compares it: text of 64 characters (so that links concatenated stay aligned). */
const WELL_FORMED_LINK = (col: string) => `(typeof(${col}) = 'text' AND length(${col}) = 64)`;

/**
 * The positions of a range that follow the position before them (or are the first),
 * as one BLOB of what each link was computed over, separated by newlines (canonical
 * JSON has none of its own; a newline in stored text shows as one piece too many), and
 * their links as one string. Both aggregates read the rows in the same order.
 */
const CHAIN_BATCH = `SELECT CAST(group_concat(t, char(10)) AS BLOB), group_concat(link, ''), count(*), sum(ok) FROM (
  SELECT c.link AS link, ${WELL_FORMED_LINK("c.link")} AS ok,
    ${hashedSql(`CASE WHEN c.seq = 1 THEN '${ZERO_LINK}' ELSE b.link END`)} AS t
  FROM chain c LEFT JOIN chain b ON b.seq = c.seq - 1 LEFT JOIN chain p ON p.seq = c.prev
  WHERE c.seq BETWEEN ? AND ? AND (c.seq = 1 OR b.seq IS NOT NULL))`;

/** The positions after missing ones (pruned, or deleted), with the position before the run and what follows the link there. */
const AFTER_GAPS = `SELECT c.seq, (SELECT max(x.seq) FROM chain x WHERE x.seq < c.seq), c.link, ${WELL_FORMED_LINK("c.link")},
    CAST(${hashedSql("''")} AS BLOB)
  FROM chain c LEFT JOIN chain p ON p.seq = c.prev
  WHERE c.seq > 1 AND NOT EXISTS (SELECT 1 FROM chain b WHERE b.seq = c.seq - 1)`;

/** Receipts' bodies (hex, comma-separated) and their recorded sha256, a range of rowids at a time. */
const BODIES = `SELECT group_concat(hex(body), ','), group_concat(body_sha256, ''), count(*), max(rowid),
    sum(typeof(body) = 'blob' AND ${WELL_FORMED_LINK("body_sha256")})
  FROM (SELECT rowid, body, body_sha256 FROM receipts WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT ${2048})`;

/** The classification a receipt's observations give, in id order (classify.ts: decidingObservation). */
const DERIVED_CLASSIFICATION = `coalesce(
  (SELECT o.classification FROM observations o WHERE o.receipt_id = r.receipt_id AND o.classification IS NOT NULL AND o.definitive = 1 ORDER BY o.id DESC LIMIT 1),
  (SELECT o.classification FROM observations o WHERE o.receipt_id = r.receipt_id AND o.classification IS NOT NULL ORDER BY o.id DESC LIMIT 1),
  'dispatched')`;

/** An id column of the receipt's row that none of its observations (or, for an execution id, its entries) recorded. */
const UNRECORDED = (col: string) =>
  `(r.${col} IS NOT NULL AND NOT (typeof(r.${col}) = 'text' AND (EXISTS (SELECT 1 FROM observations o WHERE o.receipt_id = r.receipt_id AND o.${col} = r.${col})${
    col === "execution_id"
      ? ` OR EXISTS (SELECT 1 FROM chain x WHERE x.receipt_id = r.receipt_id AND x.type = 'execution_id' AND x.data = '{"execution_id":' || json_quote(r.execution_id) || '}')`
      : ""
  })))`;

/**
 * What verify.ts checks besides links, each as a count of rows that fail it (each must be
 * 0). Where an id or an observation is compared, a value that SQLite and JavaScript could
 * see differently (a BLOB, a number in a text column) fails here, and verify.ts decides.
 */
export const CHECKS = {
  /** Every receipt is in the chain. */
  receiptsChained: `SELECT count(*) FROM receipts r WHERE NOT EXISTS (SELECT 1 FROM chain c WHERE c.receipt_id = r.receipt_id)`,
  /** Every receipt the chain names is there. */
  chainedReceiptsPresent: `SELECT count(*) FROM (SELECT DISTINCT receipt_id FROM chain WHERE receipt_id <> '') c
    WHERE NOT EXISTS (SELECT 1 FROM receipts r WHERE r.receipt_id = c.receipt_id)`,
  /** Each entry of a receipt names the receipt's entry before it (its first, none). */
  entriesInOrder: `SELECT count(*) FROM (SELECT prev, lag(seq) OVER (PARTITION BY receipt_id ORDER BY seq) AS last_seq
    FROM chain WHERE receipt_id <> '') WHERE prev IS NOT last_seq`,
  /** Every attempt is covered by an entry of its receipt, or by its seal. (So every attempt's receipt is in the chain.) */
  attemptsChained: `SELECT count(*) FROM attempts a WHERE NOT ${CHAINED_ATTEMPT} AND NOT ${SEALED("a")}`,
  /** Every observation likewise. */
  observationsChained: `SELECT count(*) FROM observations o WHERE NOT ${CHAINED_OBSERVATION} AND NOT ${SEALED("o")}`,
  /** The classification column follows from the observations. */
  classification: `SELECT count(*) FROM receipts r WHERE r.classification IS NOT ${DERIVED_CLASSIFICATION}`,
  /** Each id the receipt's row names was recorded. */
  ids: `SELECT count(*) FROM receipts r WHERE ${UNRECORDED("execution_id")} OR ${UNRECORDED("process_id")} OR ${UNRECORDED("request_id")}`,
} as const;

export type Task =
  | { kind: "positions"; first: number; last: number }
  | { kind: "gaps"; gaps: PrunedGap[] }
  | { kind: "bodies"; after: number; last: number }
  | { kind: "check"; name: keyof typeof CHECKS };

/** A task's outcome: whether all it covers holds, and how many positions it checked. */
export interface TaskResult {
  ok: boolean;
  positions: number;
}

const sha256Hex =
  typeof crypto.hash === "function"
    ? (b: Uint8Array): string => crypto.hash("sha256", b, "hex")
    : (b: Uint8Array): string => crypto.createHash("sha256").update(b).digest("hex");

/** A statement's first row as an array of values (no object per row, no copy of a BLOB). */
function first(db: Database, sql: string, ...params: unknown[]): unknown[] | undefined {
  for (const row of db.prepare(sql).values(...params)) return row;
  return undefined;
}

const NEWLINE = 10;
const POSITIONS_PER_BATCH = 2048;

/** Positions first…last: each that follows the position before it gives the link recorded there. */
function positions(db: Database, firstSeq: number, lastSeq: number): TaskResult {
  let checked = 0;
  for (let from = firstSeq; from <= lastSeq; from += POSITIONS_PER_BATCH) {
    const row = first(db, CHAIN_BATCH, from, Math.min(lastSeq, from + POSITIONS_PER_BATCH - 1));
    const n = Number(row?.[2] ?? 0);
    if (n === 0) continue;
    const [texts, links, , wellFormed] = row as [Uint8Array, string, number, number];
    if (wellFormed !== n || links.length !== 64 * n) return { ok: false, positions: checked };
    let at = 0;
    for (let i = 0; i < n; i++) {
      const end = i === n - 1 ? texts.length : texts.indexOf(NEWLINE, at);
      if (end < 0 || !links.startsWith(sha256Hex(texts.subarray(at, end)), 64 * i)) {
        return { ok: false, positions: checked };
      }
      at = end + 1;
    }
    if (texts.indexOf(NEWLINE, at) >= 0) return { ok: false, positions: checked };
    checked += n;
  }
  return { ok: true, positions: checked };
}

/** Positions after missing ones: each run of missing positions removed by a prune, and the next link follows from its last. */
function afterGaps(db: Database, gaps: readonly PrunedGap[]): TaskResult {
  const gapsByFirst = new Map(gaps.map((g) => [g.first, g]));
  let checked = 0;
  for (const [seq, before, link, wellFormed, text] of db.prepare(AFTER_GAPS).values() as Iterable<
    [number, number | null, string, number, Uint8Array]
  >) {
    const bridged = bridgeGap((before ?? 0) + 1, seq - 1, gapsByFirst);
    if (typeof bridged !== "string" || wellFormed !== 1) return { ok: false, positions: checked };
    const hash = crypto.createHash("sha256").update(bridged).update(text).digest("hex");
    if (hash !== link) return { ok: false, positions: checked };
    checked++;
  }
  return { ok: true, positions: checked };
}

const RECEIPTS_PER_BATCH = 2048;

/** Receipts with rowids after…last: each body is a BLOB whose sha256 is the one recorded. */
function bodies(db: Database, after: number, last: number): TaskResult {
  let from = after;
  while (from < last) {
    const row = first(db, BODIES, from, last);
    const n = Number(row?.[2] ?? 0);
    if (n === 0) break;
    const [hex, shas, , lastRowid, wellFormed] = row as [string, string, number, number, number];
    if (wellFormed !== n || shas.length !== 64 * n) return { ok: false, positions: 0 };
    const each = hex.split(",");
    if (each.length !== n) return { ok: false, positions: 0 };
    for (let i = 0; i < n; i++) {
      if (!shas.startsWith(sha256Hex(Buffer.from(each[i]!, "hex")), 64 * i)) return { ok: false, positions: 0 };
    }
    from = lastRowid;
    if (n < RECEIPTS_PER_BATCH) break;
  }
  return { ok: true, positions: 0 };
}

/** Runs one task in the snapshot the caller's read transaction holds. An SQL error is a failure to prove. */
export function runTask(db: Database, task: Task): TaskResult {
  try {
    switch (task.kind) {
      case "positions":
        return positions(db, task.first, task.last);
      case "gaps":
        return afterGaps(db, task.gaps);
      case "bodies":
        return bodies(db, task.after, task.last);
      case "check":
        return { ok: Number(first(db, CHECKS[task.name])?.[0]) === 0, positions: 0 };
    }
  } catch {
    return { ok: false, positions: 0 };
  }
}

/** What the tasks prove, and the report verify.ts would give when they all hold. */
export interface Plan {
  tasks: Task[];
  report: VerifyReport;
  /** Every position of the chain: the tasks together must have checked each once. */
  positions: number;
}

const POSITIONS_PER_TASK = 32_768;
const RECEIPTS_PER_TASK = 32_768;

/**
 * The tasks that prove the store intact, in the caller's read transaction, with the
 * report that holds when they do (entries counted as the tasks check them); null when
 * the store-wide structure already shows a problem (no head, a head elsewhere, a run of
 * missing positions no prune explains): verify.ts names it.
 */
export function planFast(db: Database): Plan | null {
  const head = (db.prepare<ChainHead>("SELECT seq, link FROM chain_head WHERE one = 1").get() ??
    null) as ChainHead | null;
  const [lowest, highest, positionCount] = (first(db, "SELECT min(seq), max(seq), count(*) FROM chain") ?? []) as [
    number | null,
    number | null,
    number,
  ];
  // Positions start at 1: one before (0, or negative) is in no task below, so proves nothing.
  if (head === null || lowest === null || highest === null || lowest < 1 || head.seq !== highest) return null;
  if (first(db, "SELECT link FROM chain WHERE seq = ?", highest)?.[0] !== head.link) return null;
  const storeRows = db
    .prepare<ChainRow>(
      "SELECT seq, receipt_id, type, ref, prev, data, link FROM chain WHERE receipt_id = '' ORDER BY seq",
    )
    .all();
  const store = readStoreEntries(storeRows);
  const [receipts, minRowid, maxRowid] = (first(db, "SELECT count(*), min(rowid), max(rowid) FROM receipts") ?? []) as [
    number,
    number | null,
    number | null,
  ];
  const tasks: Task[] = [];
  for (let seq = lowest; seq <= highest; seq += POSITIONS_PER_TASK) {
    tasks.push({ kind: "positions", first: seq, last: Math.min(highest, seq + POSITIONS_PER_TASK - 1) });
  }
  tasks.push({ kind: "gaps", gaps: [...store.gapsByFirst.values()] });
  if (minRowid !== null && maxRowid !== null) {
    for (let after = minRowid - 1; after < maxRowid; after += RECEIPTS_PER_TASK) {
      tasks.push({ kind: "bodies", after, last: Math.min(maxRowid, after + RECEIPTS_PER_TASK) });
    }
  }
  for (const name of Object.keys(CHECKS) as (keyof typeof CHECKS)[]) tasks.push({ kind: "check", name });
  return {
    tasks,
    positions: positionCount,
    report: {
      intact: true,
      receipts,
      entries: 0,
      head: { seq: head.seq, link: head.link },
      chain_started_at: store.startedAt,
      pre_chain: { receipts: store.preChain, sealed_at: store.startedAt },
      pruned: store.pruned,
      problems: [],
    },
  };
}

/** The report when every task held; null when one did not. */
export function fastReport(plan: Plan, results: readonly TaskResult[]): VerifyReport | null {
  if (results.length !== plan.tasks.length || results.some((r) => !r.ok)) return null;
  const entries = results.reduce((n, r) => n + r.positions, 0);
  return entries === plan.positions ? { ...plan.report, entries } : null;
}

/** Proves the store intact in the caller's read transaction, on this thread: the report, or null. */
export function verifyFast(db: Database): VerifyReport | null {
  let plan: Plan | null;
  try {
    plan = planFast(db);
  } catch {
    return null;
  }
  if (plan === null) return null;
  const results: TaskResult[] = [];
  for (const task of plan.tasks) {
    const r = runTask(db, task);
    results.push(r);
    if (!r.ok) return null;
  }
  return fastReport(plan, results);
}
