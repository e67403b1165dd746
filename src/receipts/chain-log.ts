// Appending to the receipt chain (docs/receipt-chain.md). Every append happens inside
// the store's own write transaction (BEGIN IMMEDIATE): SQLite's write lock orders the
// appends of concurrent sbx processes, and the entry, its link and the new head are
// committed with the row they cover, so chaining adds no durable write of its own.

import type { Database, Statement } from "../platform/sqlite.js";
import {
  ATTEMPT_FIELDS,
  canonicalJson,
  chainLink,
  type EntryType,
  envelope,
  type Json,
  OBSERVATION_FIELDS,
  REQUEST_FIELDS,
  rowData,
  sealData,
  ZERO_LINK,
} from "./chain.js";

export const CHAIN_SCHEMA = `
  CREATE TABLE chain (
    seq        INTEGER PRIMARY KEY,  -- position in the store-wide chain, from 1
    receipt_id TEXT NOT NULL,        -- "" for the store's own entries; no foreign key: outlives its receipt
    type       TEXT NOT NULL,        -- genesis | seal | request | attempt | observation | execution_id | checkpoint
    ref        INTEGER,              -- attempts.attempt or observations.id of the row it covers
    prev       INTEGER,              -- position of the receipt's previous entry (NULL for its first)
    data       TEXT,                 -- the canonical data of an entry that has no row of its own
    link       TEXT NOT NULL         -- SHA-256(previous position's link ‖ this entry), lowercase hex
  );
  CREATE INDEX chain_by_receipt ON chain (receipt_id, seq);
  CREATE TABLE chain_head (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    seq  INTEGER NOT NULL,
    link TEXT NOT NULL
  );`;

/** A position and its link. */
export interface ChainHead {
  seq: number;
  link: string;
}

interface ChainStatements {
  head: Statement<ChainHead>;
  last: Statement<ChainHead>;
  lastOfReceipt: Statement<ChainHead>;
  insert: Statement;
  setHead: Statement;
  receipt: Statement;
  attempt: Statement;
  observation: Statement;
}

const cache = new WeakMap<Database, ChainStatements>();

function statements(db: Database): ChainStatements {
  let st = cache.get(db);
  if (!st) {
    st = {
      head: db.prepare("SELECT seq, link FROM chain_head WHERE one = 1"),
      last: db.prepare("SELECT seq, link FROM chain ORDER BY seq DESC LIMIT 1"),
      lastOfReceipt: db.prepare("SELECT seq, link FROM chain WHERE receipt_id = ? ORDER BY seq DESC LIMIT 1"),
      insert: db.prepare(
        "INSERT INTO chain (seq, receipt_id, type, ref, prev, data, link) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ),
      setHead: db.prepare(
        "INSERT INTO chain_head (one, seq, link) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, link = excluded.link",
      ),
      receipt: db.prepare("SELECT * FROM receipts WHERE receipt_id = ?"),
      attempt: db.prepare("SELECT * FROM attempts WHERE receipt_id = ? AND attempt = ?"),
      observation: db.prepare("SELECT * FROM observations WHERE id = ?"),
    };
    cache.set(db, st);
  }
  return st;
}

/** The appends of one write transaction. Made by withChain, which writes the head at the end. */
export class ChainAppender {
  /** Read at the first append (a transaction that appends nothing reads nothing). */
  private head: ChainHead | null = null;
  private readonly lastOfReceipt = new Map<string, ChainHead | null>();

  constructor(private readonly st: ChainStatements) {}

  /** Where the chain ends now: the head the store recorded, or after the last position if that is further. */
  position(): ChainHead {
    if (this.head === null) {
      // When the head is missing or behind (a damaged store), appends continue after
      // the last position, and verify says what happened.
      const recorded = this.st.head.get();
      const last = this.st.last.get();
      const from = !recorded ? last : !last || recorded.seq >= last.seq ? recorded : last;
      this.head = from ? { seq: from.seq, link: from.link } : { seq: 0, link: ZERO_LINK };
    }
    return this.head;
  }

  /** A receipt's last entry (its position and link), or null when it has none. */
  lastOf(receiptId: string): ChainHead | null {
    if (!this.lastOfReceipt.has(receiptId))
      this.lastOfReceipt.set(receiptId, this.st.lastOfReceipt.get(receiptId) ?? null);
    return this.lastOfReceipt.get(receiptId)!;
  }

  /**
   * Appends one entry whose data is canonical JSON. `keep` stores the data in the chain
   * row itself, for entries that have no row of their own. Returns its position.
   */
  append(receiptId: string, type: EntryType, ref: number | null, data: string, keep = false): number {
    const prev = receiptId === "" ? null : this.lastOf(receiptId);
    const head = this.position();
    const seq = head.seq + 1;
    const link = chainLink(head.link, envelope(type, receiptId, prev?.link ?? null, data));
    this.st.insert.run(seq, receiptId, type, ref, prev?.seq ?? null, keep ? data : null, link);
    this.head = { seq, link };
    if (receiptId !== "") this.lastOfReceipt.set(receiptId, { seq, link });
    return seq;
  }

  /** An entry that has no row of its own: its data kept in the chain (genesis, checkpoint, execution_id). */
  appendNote(receiptId: string, type: EntryType, data: Json): number {
    return this.append(receiptId, type, null, canonicalJson(data), true);
  }

  /** The request entry of a receipt row just inserted (read back: what is hashed is what was stored). */
  appendRequest(receiptId: string): void {
    const row = this.st.receipt.get(receiptId);
    if (!row) throw new Error(`receipt ${receiptId} vanished inside its own transaction`);
    this.append(receiptId, "request", null, rowData(row, REQUEST_FIELDS));
  }

  appendAttempt(receiptId: string, attempt: number): void {
    const row = this.st.attempt.get(receiptId, attempt);
    if (!row) throw new Error(`attempt ${attempt} of ${receiptId} vanished inside its own transaction`);
    this.append(receiptId, "attempt", attempt, rowData(row, ATTEMPT_FIELDS));
  }

  appendObservation(receiptId: string, id: number): void {
    const row = this.st.observation.get(id);
    if (!row) throw new Error(`observation ${id} of ${receiptId} vanished inside its own transaction`);
    this.append(receiptId, "observation", id, rowData(row, OBSERVATION_FIELDS));
  }

  /** Called once by withChain after the work: the new head, in the same transaction. */
  finish(): void {
    if (this.head !== null) this.st.setHead.run(this.head.seq, this.head.link);
  }
}

/** Runs fn with an appender; call inside a write transaction (the caller's db.transaction). */
export function withChain<T>(db: Database, fn: (chain: ChainAppender) => T): T {
  const chain = new ChainAppender(statements(db));
  const result = fn(chain);
  chain.finish();
  return result;
}

/**
 * Starts the chain of a store (schema migration 3): a genesis entry, then one `seal` per
 * receipt already there, covering its request, attempts and observations as they are
 * now. Nothing already stored is rewritten; from here on, a change to it shows.
 */
export function startChain(db: Database, now: Date): void {
  db.exec(CHAIN_SCHEMA);
  const receipts = db.prepare("SELECT * FROM receipts ORDER BY created_at, receipt_id").all();
  const attempts = groupBy(db.prepare("SELECT * FROM attempts ORDER BY receipt_id, attempt").all());
  const observations = groupBy(db.prepare("SELECT * FROM observations ORDER BY id").all());
  withChain(db, (chain) => {
    chain.appendNote("", "genesis", { pre_chain_receipts: receipts.length, started_at: now.toISOString() });
    for (const r of receipts) {
      const id = r.receipt_id as string;
      const obs = observations.get(id) ?? [];
      chain.append(id, "seal", null, sealData(r, attempts.get(id) ?? [], obs));
      // An execution id learned without an observation (a stream's start) is an entry of its own.
      const exe = r.execution_id;
      if (typeof exe === "string" && !obs.some((o) => o.execution_id === exe)) {
        chain.appendNote(id, "execution_id", { execution_id: exe });
      }
    }
  });
}

function groupBy(rows: Record<string, unknown>[]): Map<string, Record<string, unknown>[]> {
  const out = new Map<string, Record<string, unknown>[]>();
  for (const r of rows) {
    const id = r.receipt_id as string;
    const list = out.get(id);
    if (list) list.push(r);
    else out.set(id, [r]);
  }
  return out;
}

/** A run of positions a prune removed, and the link at its last one (to check the next position against). */
export interface PrunedGap {
  first: number;
  last: number;
  link: string;
}

/**
 * Deletes the receipts created before `before` whose classification is not in `keep`,
 * with their attempts, observations and chain entries, and appends a `checkpoint`
 * that says what went: how many receipts and entries, and each run of positions with
 * its last link, so that verify checks the positions after a run and tells a prune
 * from a deletion. Call inside a write transaction.
 */
export function pruneChained(
  db: Database,
  before: string,
  keep: readonly string[],
  now: Date,
): { deleted: number; kept: number } {
  const list = keep.map(() => "?").join(", ");
  const spared = keep.length ? ` AND classification NOT IN (${list})` : "";
  const kept = keep.length
    ? db
        .prepare<{ n: number }>(
          `SELECT COUNT(*) AS n FROM receipts WHERE created_at < ? AND classification IN (${list})`,
        )
        .get(before, ...keep)!.n
    : 0;
  const victims = `SELECT receipt_id FROM receipts WHERE created_at < ?${spared}`;
  const removed = db
    .prepare<ChainHead>(`SELECT seq, link FROM chain WHERE receipt_id IN (${victims}) ORDER BY seq`)
    .all(before, ...keep);
  db.prepare(`DELETE FROM chain WHERE receipt_id IN (${victims})`).run(before, ...keep);
  const deleted = db.prepare(`DELETE FROM receipts WHERE created_at < ?${spared}`).run(before, ...keep).changes;
  if (deleted > 0 || removed.length > 0) {
    const gaps: PrunedGap[] = [];
    for (const r of removed) {
      const last = gaps[gaps.length - 1];
      if (last && last.last + 1 === r.seq) {
        last.last = r.seq;
        last.link = r.link;
      } else gaps.push({ first: r.seq, last: r.seq, link: r.link });
    }
    withChain(db, (chain) =>
      chain.appendNote("", "checkpoint", {
        at: now.toISOString(),
        before,
        entries: removed.length,
        gaps: gaps.map((g) => ({ first: g.first, last: g.last, link: g.link })),
        receipts: deleted,
      }),
    );
  }
  return { deleted, kept };
}
