// The receipt store verified in one read snapshot (a read transaction: WAL readers
// never wait for, nor hold up, the writers of other sbx processes): the chain in
// position order, then every receipt with its attempts and observations, streamed in
// receipt order so that a large store is never all in memory at once.

import type { Database } from "../platform/sqlite.js";
import type { ChainHead } from "./chain-log.js";
import { ATTEMPT_FIELDS, ENCODED_DATA, OBSERVATION_FIELDS, REQUEST_FIELDS } from "./chain.js";
import type { Row } from "./verify-receipt.js";
import { availableThreads } from "../platform/threads.js";
import { verifyFast } from "./verify-fast.js";
import { jsonObjectSql } from "./verify-fast-sql.js";
import { verifyOnThreads } from "./verify-threads.js";
import { type ChainRow, ChainVerifier, type VerifyReport } from "./verify.js";

/** Rows of one query, grouped by receipt_id as they come (the query orders by it). */
function* byReceipt(rows: Iterable<Row>): Generator<[string, Row[]]> {
  let id: string | null = null;
  let group: Row[] = [];
  for (const r of rows) {
    const rid = r.receipt_id as string;
    if (rid !== id) {
      if (id !== null) yield [id, group];
      id = rid;
      group = [];
    }
    group.push(r);
  }
  if (id !== null) yield [id, group];
}

/** SQLite's BINARY order (bytes of UTF-8), which ORDER BY receipt_id follows. */
function byteOrder(a: string, b: string): number {
  const ascii = /^[\x00-\x7f]*$/;
  if (ascii.test(a) && ascii.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Merges receipts, attempts and observations by receipt id (each in receipt id order). */
function* receiptsWithRows(
  receipts: Iterable<Row>,
  attempts: Iterable<Row>,
  observations: Iterable<Row>,
): Generator<[string, Row | undefined, Row[], Row[]]> {
  const r = receipts[Symbol.iterator]();
  const a = byReceipt(attempts);
  const o = byReceipt(observations);
  try {
    yield* merge(r, a, o);
  } finally {
    // Close every statement still being read, however this ends (the transaction ends next).
    r.return?.();
    a.return(undefined);
    o.return(undefined);
  }
}

function* merge(
  r: Iterator<Row>,
  a: Iterator<[string, Row[]]>,
  o: Iterator<[string, Row[]]>,
): Generator<[string, Row | undefined, Row[], Row[]]> {
  let nr = r.next();
  let na = a.next();
  let no = o.next();
  while (!nr.done || !na.done || !no.done) {
    const ids = [
      nr.done ? null : (nr.value.receipt_id as string),
      na.done ? null : na.value[0],
      no.done ? null : no.value[0],
    ];
    const id = ids.filter((x): x is string => x !== null).sort(byteOrder)[0]!;
    const request = !nr.done && nr.value.receipt_id === id ? nr.value : undefined;
    const atts = !na.done && na.value[0] === id ? na.value[1] : [];
    const obs = !no.done && no.value[0] === id ? no.value[1] : [];
    yield [id, request, atts, obs];
    if (request) nr = r.next();
    if (!na.done && na.value[0] === id) na = a.next();
    if (!no.done && no.value[0] === id) no = o.next();
  }
}

/**
 * A row's data (chain.ts: rowData) encoded by SQLite (verify-fast-sql.ts: jsonObjectSql):
 * it saves reading every column into JavaScript, which is most of the time verify takes.
 * (A REAL, which sbx never writes, is written otherwise: such a row shows as changed. A
 * BLOB fails the query: verifyStore then encodes in JavaScript.)
 */
const encodedData = (fields: readonly string[]): string => jsonObjectSql(fields);

/** What verification reads of each table (the key columns, what derived checks use, the encoded data). */
const READS = {
  receipts: {
    columns: ["receipt_id", "classification", "execution_id", "process_id", "request_id", "body", "body_sha256"],
    fields: REQUEST_FIELDS,
    order: "receipt_id",
    one: "receipt_id = ?",
    key: ["receipt_id"],
  },
  attempts: {
    columns: ["receipt_id", "attempt"],
    fields: ATTEMPT_FIELDS,
    order: "receipt_id, attempt",
    one: "receipt_id = ? AND attempt = ?",
    key: ["receipt_id", "attempt"],
  },
  observations: {
    columns: [
      "receipt_id",
      "id",
      "source",
      "at",
      "classification",
      "definitive",
      "execution_id",
      "process_id",
      "request_id",
    ],
    fields: OBSERVATION_FIELDS,
    order: "receipt_id, id",
    one: "id = ?",
    key: ["id"],
  },
} as const;

/** A table's rows in receipt order: the columns read, and the data SQLite encoded (or every column). */
function* select(db: Database, table: keyof typeof READS, inSql: boolean): Generator<Row> {
  const r = READS[table];
  if (!inSql) {
    yield* db.prepare(`SELECT * FROM ${table} ORDER BY ${r.order}`).iterate();
    return;
  }
  const sql = `SELECT ${r.columns.join(", ")}, ${encodedData(r.fields)} FROM ${table} ORDER BY ${r.order}`;
  const n = r.columns.length;
  for (const v of db.prepare(sql).values()) {
    const row: Row = {};
    for (let i = 0; i < n; i++) row[r.columns[i]!] = v[i];
    row[ENCODED_DATA] = v[n];
    yield row;
  }
}

/** "JSON cannot hold BLOB values": a BLOB where sbx writes text. */
const isBlobInJson = (err: unknown) => /\bBLOB\b/i.test(String((err as Error)?.message));

export interface VerifyStoreOptions {
  /** The database's file, for the connections of other threads (without it, one thread). */
  file?: string;
  busyTimeoutMs?: number;
  /** Threads to prove it intact on (default: the CPUs here, at most 4, for a store of 16,384 positions or more). */
  threads?: number;
}

/** From this many positions, a store is proved intact on several threads (each costs a few ms to start). */
const THREADS_FROM = 16_384;
const MOST_THREADS = 4;

function threadsFor(db: Database): number {
  const cpus = Math.min(availableThreads(), MOST_THREADS);
  if (cpus < 2) return 1;
  const highest = db.prepare<{ n: number | null }>("SELECT max(seq) AS n FROM chain").get()?.n ?? 0;
  return highest >= THREADS_FROM ? cpus : 1;
}

/**
 * The store verified in one read snapshot: proved intact in bulk (verify-fast.ts), on
 * several threads where it is large (verify-threads.ts), or else entry by entry, which
 * names every problem.
 */
export async function verifyStore(db: Database, opts: VerifyStoreOptions = {}): Promise<VerifyReport> {
  let proveFirst = true;
  const threads = opts.file === undefined ? 1 : (opts.threads ?? threadsFor(db));
  if (threads > 1 && opts.file !== undefined) {
    const data = { file: opts.file, busyTimeoutMs: opts.busyTimeoutMs ?? 15_000 };
    const onThreads = await verifyOnThreads(db, data, threads).catch(() => "unavailable" as const);
    if (onThreads !== "unavailable") {
      if (onThreads !== null) return onThreads;
      proveFirst = false;
    }
  }
  db.exec("BEGIN");
  try {
    return (proveFirst ? verifyFast(db) : null) ?? verifyEntries(db);
  } finally {
    db.exec("COMMIT");
  }
}

/** Entry by entry (verify.ts), naming every problem; in the caller's read transaction. */
export function verifyEntries(db: Database): VerifyReport {
  try {
    return verifyIn(db, true);
  } catch (err) {
    if (!isBlobInJson(err)) throw err;
    return verifyIn(db, false);
  }
}

function verifyIn(db: Database, inSql: boolean): VerifyReport {
  const chain: ChainRow[] = [];
  for (const v of db.prepare("SELECT seq, receipt_id, type, ref, prev, data, link FROM chain ORDER BY seq").values()) {
    chain.push({
      seq: v[0] as number,
      receipt_id: v[1] as string,
      type: v[2] as string,
      ref: v[3] as number | null,
      prev: v[4] as number | null,
      data: v[5] as string | null,
      link: String(v[6]),
    });
  }
  const head = db.prepare<ChainHead>("SELECT seq, link FROM chain_head WHERE one = 1").get() ?? null;
  const verifier = new ChainVerifier({ chain, head });
  const rows = receiptsWithRows(
    select(db, "receipts", inSql),
    select(db, "attempts", inSql),
    select(db, "observations", inSql),
  );
  for (const [id, request, attempts, observations] of rows) verifier.receipt(id, request, attempts, observations);
  return verifier.finish();
}
