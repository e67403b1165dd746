// Proving a receipt store intact in bulk (docs/receipt-chain.md, "How verify is fast").
// Verifying entry by entry in JavaScript (verify.ts) reads ~900,000 rows for 100,000
// receipts, and turning each column into a JavaScript value is most of its time. Here
// SQLite assembles, for a few thousand positions at a time, the exact bytes each link
// was computed over (one BLOB) and the links themselves (one string), with a handful of
// sums about the same rows (verify-fast-sql.ts); JavaScript hashes and adds up. The
// work comes as independent tasks (position ranges, receipt ranges), so that threads
// can share it (verify-threads.ts).
//
// The contract: this either proves that verify.ts would find nothing wrong in the same
// snapshot, and gives the report it would give, or it proves nothing (any failure,
// any surprise, any SQL error) and the caller verifies entry by entry, which names what
// is wrong. It never names a problem itself. test/unit/receipt-verify-fast.test.ts holds
// it to that over every tamper of test/unit/receipt-chain.test.ts and random ones.
//
// What verify.ts checks besides links, and how the sums prove it (fastReport):
// - Each receipt's entries follow one another (each names the entry before it, the
//   first none). Every entry names an earlier entry of its receipt or none (FOLLOWS,
//   per position), so for a receipt whose entries are at s1 < … < sk, the entry at si
//   names a position ≤ s(i−1) (none counting 0, and s1 must name none): Σ (si − named)
//   ≥ sk, equal only when each names the one right before it. So Σ over every receipt's
//   entries of (position − named) equals Σ over receipt rows of their last position
//   exactly when every chained receipt has a row and every receipt's entries follow one
//   another (a receipt without a row adds to the first sum only).
// - Then each chained receipt has one first entry: the count of first entries equals
//   the count of receipt rows exactly when every receipt row is chained.
// - Every attempt and observation row is covered by an entry of its receipt, or by its
//   seal: the rows entries cover (each once: a row covered twice proves nothing) and the
//   rows seals cover (one seal per receipt at most, its first entry) add up to all rows.
// - The receipt rows themselves (body, classification, ids): counted in SQL.

import { isUtf8 } from "node:buffer";
import { sha256Hex } from "../platform/sha256.js";
import type { Database } from "../platform/sqlite.js";
import type { ChainHead, PrunedGap } from "./chain-log.js";
import { bridgeGap, type ChainRow, readStoreEntries, type VerifyReport } from "./verify.js";
import { AFTER_GAP, POSITIONS_BATCH, RECEIPTS_BATCH, RECEIPTS_PER_BATCH } from "./verify-fast-sql.js";

export type Task =
  | { kind: "positions"; first: number; last: number }
  | { kind: "gaps"; gaps: PrunedGap[] }
  | { kind: "receipts"; after: number; last: number };

/** A task's outcome: whether all it covers holds, and what it counted for fastReport to add up. */
export interface TaskResult {
  ok: boolean;
  /** Positions whose link it recomputed. */
  positions: number;
  /** Receipts' entries that name no entry before them. */
  firsts: number;
  /** Σ (position − position of the entry it names, or 0) over receipts' entries. */
  steps: number;
  /** Σ over receipt rows of their last position in the chain. */
  lasts: number;
  /** Rowids of the attempt rows, and ids of the observation rows, receipts' entries cover. */
  attempts: number[];
  observations: number[];
  /** Attempt and observation rows no entry covers, of receipts sealed in its positions. */
  sealedAttempts: number;
  sealedObservations: number;
}

const nothing = (ok: boolean): TaskResult => ({
  ok,
  positions: 0,
  firsts: 0,
  steps: 0,
  lasts: 0,
  attempts: [],
  observations: [],
  sealedAttempts: 0,
  sealedObservations: 0,
});

/** A statement's first row as an array of values (no object per row, no copy of a BLOB). */
function first(db: Database, sql: string, ...params: unknown[]): unknown[] | undefined {
  for (const row of db.prepare(sql).values(...params)) return row;
  return undefined;
}

/** A sum as SQLite gives it: an integer, or null for none. Anything else proves nothing. */
function count(v: unknown): number | null {
  if (v === null || v === undefined) return 0;
  return typeof v === "number" && Number.isSafeInteger(v) ? v : null;
}

/** Appends the rowids of a comma-separated list (or one) to `into`; false for anything but positive integers. */
function readIds(list: unknown, into: number[]): boolean {
  if (list === null || list === undefined) return true;
  if (typeof list === "number") {
    if (!Number.isSafeInteger(list) || list < 1) return false;
    into.push(list);
    return true;
  }
  if (typeof list !== "string") return false;
  let n = 0;
  let digits = 0;
  for (let i = 0; i <= list.length; i++) {
    const ch = i === list.length ? 44 : list.charCodeAt(i);
    if (ch === 44) {
      if (digits === 0 || digits > 15 || n < 1) return false;
      into.push(n);
      n = 0;
      digits = 0;
    } else if (ch >= 48 && ch <= 57) {
      n = n * 10 + (ch - 48);
      digits++;
    } else return false;
  }
  return true;
}

const NEWLINE = 10;
const POSITIONS_PER_BATCH = 2048;

/**
 * Adds ENTRY_FACTS (verify-fast-sql.ts) as a statement returned them, from column
 * `at` on, for `entries` entries; false when they do not all follow or are not what
 * SQLite's sums and lists of integers are.
 */
function addFacts(out: TaskResult, row: unknown[], at: number, entries: number): boolean {
  const follows = count(row[at]);
  const steps = count(row[at + 1]);
  const firsts = count(row[at + 2]);
  const sealedA = count(row[at + 5]);
  const sealedO = count(row[at + 6]);
  if (follows !== entries || steps === null || firsts === null || sealedA === null || sealedO === null) return false;
  if (!readIds(row[at + 3], out.attempts) || !readIds(row[at + 4], out.observations)) return false;
  out.steps += steps;
  out.firsts += firsts;
  out.sealedAttempts += sealedA;
  out.sealedObservations += sealedO;
  return true;
}

/**
 * Positions first…last that follow the position before them: each gives the link
 * recorded there, and what they count (ENTRY_FACTS).
 */
function positions(db: Database, firstSeq: number, lastSeq: number): TaskResult {
  const out = nothing(true);
  for (let from = firstSeq; from <= lastSeq; from += POSITIONS_PER_BATCH) {
    const row = first(db, POSITIONS_BATCH, from, Math.min(lastSeq, from + POSITIONS_PER_BATCH - 1));
    const n = count(row?.[2]);
    if (row === undefined || n === null) return nothing(false);
    if (n === 0) continue;
    const [texts, links] = row;
    // Every link well formed.
    if (count(row[3]) !== n) return nothing(false);
    if (!(texts instanceof Uint8Array) || typeof links !== "string" || links.length !== 64 * n) return nothing(false);
    // SQLite keeps text as stored, JavaScript reads it as UTF-8: bytes that are not UTF-8
    // would be hashed here as they are but by verify.ts as read. Only UTF-8 proves anything.
    if (!isUtf8(texts)) return nothing(false);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const end = i === n - 1 ? texts.length : texts.indexOf(NEWLINE, at);
      if (end < 0 || !links.startsWith(sha256Hex(texts.subarray(at, end)), 64 * i)) return nothing(false);
      at = end + 1;
    }
    if (texts.indexOf(NEWLINE, at) >= 0) return nothing(false);
    if (!addFacts(out, row, 4, n)) return nothing(false);
    out.positions += n;
  }
  return out;
}

/**
 * The positions right after runs of missing ones: each run was removed by prunes, and
 * the link there follows from the last link the checkpoints recorded. (A position after
 * missing ones that no checkpoint names is checked by no task: fastReport then finds a
 * position unchecked.)
 */
function afterGaps(db: Database, gaps: readonly PrunedGap[]): TaskResult {
  const gapsByFirst = new Map(gaps.map((g) => [g.first, g]));
  const out = nothing(true);
  for (const seq of new Set(gaps.map((g) => g.last + 1))) {
    const row = first(db, AFTER_GAP, seq);
    if (row === undefined) continue;
    const [, before, link, wellFormed, text] = row as [number, number | null, string, number, Uint8Array];
    const bridged = bridgeGap((before ?? 0) + 1, seq - 1, gapsByFirst);
    if (typeof bridged !== "string" || wellFormed !== 1 || !isUtf8(text)) return nothing(false);
    const hash = sha256Hex(Buffer.concat([Buffer.from(bridged, "utf8"), text]));
    if (hash !== link || !addFacts(out, row, 5, 1)) return nothing(false);
    out.positions++;
  }
  return out;
}

/**
 * Receipts with rowids after…last: each body is a BLOB whose sha256 is the one recorded,
 * each row holds (ROW_HOLDS), and the sum of their last positions.
 */
function receipts(db: Database, after: number, last: number): TaskResult {
  const out = nothing(true);
  let from = after;
  while (from < last) {
    const row = first(db, RECEIPTS_BATCH, from, last);
    const n = count(row?.[2]);
    if (row === undefined || n === null) return nothing(false);
    if (n === 0) break;
    const [hex, shas, , lastRowid] = row;
    const holds = count(row[4]);
    const lasts = count(row[5]);
    if (holds !== n || lasts === null || typeof hex !== "string" || typeof shas !== "string") return nothing(false);
    if (shas.length !== 64 * n || typeof lastRowid !== "number") return nothing(false);
    const each = hex.split(",");
    if (each.length !== n) return nothing(false);
    for (let i = 0; i < n; i++) {
      if (!shas.startsWith(sha256Hex(Buffer.from(each[i]!, "hex")), 64 * i)) return nothing(false);
    }
    out.lasts += lasts;
    from = lastRowid;
    if (n < RECEIPTS_PER_BATCH) break;
  }
  return out;
}

/** Runs one task in the snapshot the caller's read transaction holds. An SQL error is a failure to prove. */
export function runTask(db: Database, task: Task): TaskResult {
  try {
    switch (task.kind) {
      case "positions":
        return positions(db, task.first, task.last);
      case "gaps":
        return afterGaps(db, task.gaps);
      case "receipts":
        return receipts(db, task.after, task.last);
    }
  } catch {
    return nothing(false);
  }
}

/** What the tasks prove, and the report verify.ts would give when they all hold. */
export interface Plan {
  tasks: Task[];
  report: VerifyReport;
  /** Every position of the chain: the tasks together must have checked each once. */
  positions: number;
  /** Rows of each table, and the highest rowid of attempts and observations. */
  receipts: number;
  attempts: { rows: number; highest: number };
  observations: { rows: number; highest: number };
}

const POSITIONS_PER_TASK = 32_768;
const RECEIPTS_PER_TASK = 32_768;
/**
 * Positions beyond this prove nothing here (each task's sums then stay exact numbers in
 * JavaScript, 32,768 × 2^35 < 2^53); nor do rowids of attempts and observations beyond
 * the last, which are marked in a bitmap of that many bits.
 */
const MOST_POSITIONS = 2 ** 35;
const MOST_ROWID = 2 ** 28;

type Counts = [number, number | null, number | null];

/**
 * The tasks that prove the store intact, in the caller's read transaction, with the
 * report that holds when they do (entries counted as the tasks check them); null when
 * the store-wide structure already shows a problem (no head, a head elsewhere) or is
 * beyond what the tasks count: verify.ts names it.
 */
export function planFast(db: Database): Plan | null {
  const head = (db.prepare<ChainHead>("SELECT seq, link FROM chain_head WHERE one = 1").get() ??
    null) as ChainHead | null;
  const [positionCount, lowest, highest] = (first(db, "SELECT count(*), min(seq), max(seq) FROM chain") ??
    []) as Counts;
  // Positions start at 1: one before (0, or negative) is in no task below, so proves nothing.
  if (head === null || lowest === null || highest === null || lowest < 1 || head.seq !== highest) return null;
  if (highest >= MOST_POSITIONS) return null;
  if (first(db, "SELECT link FROM chain WHERE seq = ?", highest)?.[0] !== head.link) return null;
  const storeRows = db
    .prepare<ChainRow>(
      "SELECT seq, receipt_id, type, ref, prev, data, link FROM chain WHERE receipt_id = '' ORDER BY seq",
    )
    .all();
  const store = readStoreEntries(storeRows);
  const [receiptCount, minRowid, maxRowid] = (first(db, "SELECT count(*), min(rowid), max(rowid) FROM receipts") ??
    []) as Counts;
  const [attemptCount, , attemptMax] = (first(db, "SELECT count(*), 0, max(rowid) FROM attempts") ?? []) as Counts;
  const [observationCount, , observationMax] = (first(db, "SELECT count(*), 0, max(rowid) FROM observations") ??
    []) as Counts;
  if ((attemptMax ?? 0) >= MOST_ROWID || (observationMax ?? 0) >= MOST_ROWID) return null;
  const tasks: Task[] = [];
  for (let seq = lowest; seq <= highest; seq += POSITIONS_PER_TASK) {
    tasks.push({ kind: "positions", first: seq, last: Math.min(highest, seq + POSITIONS_PER_TASK - 1) });
  }
  // Positions missing (or the first not at 1): the positions after them are checked by their checkpoints.
  if (lowest !== 1 || positionCount !== highest) tasks.push({ kind: "gaps", gaps: [...store.gapsByFirst.values()] });
  if (minRowid !== null && maxRowid !== null) {
    for (let after = minRowid - 1; after < maxRowid; after += RECEIPTS_PER_TASK) {
      tasks.push({ kind: "receipts", after, last: Math.min(maxRowid, after + RECEIPTS_PER_TASK) });
    }
  }
  return {
    tasks,
    positions: positionCount,
    receipts: receiptCount,
    attempts: { rows: attemptCount, highest: attemptMax ?? 0 },
    observations: { rows: observationCount, highest: observationMax ?? 0 },
    report: {
      intact: true,
      receipts: receiptCount,
      entries: 0,
      head: { seq: head.seq, link: head.link },
      chain_started_at: store.startedAt,
      pre_chain: { receipts: store.preChain, sealed_at: store.startedAt },
      pruned: store.pruned,
      problems: [],
    },
  };
}

/**
 * Whether the attempt (or observation) rows receipts' entries cover are each covered
 * once and, with those seals cover, are every row of the table.
 */
function everyRowOnce(plan: Plan, results: readonly TaskResult[], table: "attempts" | "observations"): boolean {
  const { rows, highest } = plan[table];
  const seen = new Uint8Array((highest >> 3) + 1);
  let n = 0;
  for (const r of results) {
    for (const id of r[table]) {
      if (id > highest) return false;
      const bit = 1 << (id & 7);
      if (seen[id >> 3]! & bit) return false;
      seen[id >> 3]! |= bit;
      n++;
    }
    n += table === "attempts" ? r.sealedAttempts : r.sealedObservations;
  }
  return n === rows;
}

/** The report when every task held and what they counted adds up (see the top of this file); null when not. */
export function fastReport(plan: Plan, results: readonly TaskResult[]): VerifyReport | null {
  if (results.length !== plan.tasks.length || results.some((r) => !r.ok)) return null;
  const total = (f: (r: TaskResult) => number) => results.reduce((n, r) => n + BigInt(f(r)), 0n);
  const entries = results.reduce((n, r) => n + r.positions, 0);
  if (entries !== plan.positions) return null;
  if (total((r) => r.steps) !== total((r) => r.lasts)) return null;
  if (total((r) => r.firsts) !== BigInt(plan.receipts)) return null;
  if (!everyRowOnce(plan, results, "attempts") || !everyRowOnce(plan, results, "observations")) return null;
  return { ...plan.report, entries };
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
