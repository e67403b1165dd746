// Verifying the receipt chain (docs/receipt-chain.md): recompute every position's link
// from the rows it covers, and name what breaks and where. Pure: the rows come from
// the store (verify-store.ts) or from a bundle (bundle.ts), receipt by receipt.

import type { ChainHead, PrunedGap } from "./chain-log.js";
import { chainLink, envelope, ZERO_LINK } from "./chain.js";
import { type Row, verifyReceiptEntries } from "./verify-receipt.js";

/** One position of the chain as stored. */
export interface ChainRow {
  seq: number;
  receipt_id: string;
  type: string;
  ref: number | null;
  /** Position of the receipt's previous entry. */
  prev: number | null;
  data: string | null;
  link: string;
}

/**
 * What kind of break: an entry whose content no longer matches what was recorded
 * (`changed`), one that is gone (`deleted`), one the chain never recorded (`inserted`),
 * one found in another's place (`reordered`), and positions gone from the chain with no
 * prune to explain them (`missing`).
 */
export type ProblemKind = "changed" | "deleted" | "inserted" | "reordered" | "missing";

export interface Problem {
  kind: ProblemKind;
  /** null for the store's own entries and for positions that name no receipt any more. */
  receipt_id: string | null;
  /** Which entry of the receipt: "request", "attempt 2", "observation 3 (answer)", … */
  entry: string | null;
  /** Its position in the store-wide chain. */
  position: number | null;
  detail: string;
}

export interface PruneRecord {
  position: number;
  at: string;
  before: string;
  receipts: number;
  entries: number;
  gaps: PrunedGap[];
}

export interface VerifyReport {
  intact: boolean;
  /** Receipts checked entry by entry. */
  receipts: number;
  /** Positions present in the chain. */
  entries: number;
  head: ChainHead | null;
  chain_started_at: string | null;
  /** Receipts stored before the store had a chain: each sealed as one entry when it began. */
  pre_chain: { receipts: number; sealed_at: string | null };
  pruned: PruneRecord[];
  problems: Problem[];
}

export interface ChainInput {
  /** In position order. */
  chain: Iterable<ChainRow>;
  /** Where the store (or the bundle) says the chain ends; null when no head is recorded. */
  head: ChainHead | null;
  /**
   * The position before the first row given and its link: a bundle may start mid-chain
   * (its link null when the store had lost it: the first position's link is then not checked).
   */
  start?: { seq: number; link: string | null };
  /** Receipts whose rows are all given (default: every one); the others are checked by their positions only. */
  complete?: (receiptId: string) => boolean;
}

const RECEIPT_ENTRY_TYPES = new Set<string>(["seal", "request", "attempt", "observation", "execution_id"]);

function range(first: number, last: number): string {
  return first === last ? `position ${first}` : `positions ${first}–${last}`;
}

function parseObject(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function pruneRecord(row: ChainRow): PruneRecord | null {
  const d = parseObject(row.data);
  if (!d || !Array.isArray(d.gaps)) return null;
  const gaps = (d.gaps as unknown[]).filter(
    (g): g is PrunedGap =>
      !!g &&
      typeof g === "object" &&
      Number.isInteger((g as PrunedGap).first) &&
      Number.isInteger((g as PrunedGap).last) &&
      typeof (g as PrunedGap).link === "string",
  );
  return {
    position: row.seq,
    at: String(d.at),
    before: String(d.before),
    receipts: Number(d.receipts),
    entries: Number(d.entries),
    gaps,
  };
}

/** What the store's own entries say: its prunes, the runs of positions they explain, where the chain began. */
export interface StoreEntries {
  pruned: PruneRecord[];
  /** Each run of positions a prune removed, by its first position (only runs before their checkpoint). */
  gapsByFirst: Map<number, PrunedGap>;
  /** From the (last) genesis entry. */
  startedAt: string | null;
  preChain: number;
}

/** Reads the store's own entries (receipt_id "") among rows in position order; the others are passed over. */
export function readStoreEntries(rows: Iterable<ChainRow>): StoreEntries {
  const out: StoreEntries = { pruned: [], gapsByFirst: new Map(), startedAt: null, preChain: 0 };
  for (const row of rows) {
    if (row.receipt_id !== "") continue;
    if (row.type === "checkpoint") {
      const rec = pruneRecord(row);
      if (rec) {
        out.pruned.push(rec);
        for (const g of rec.gaps) if (g.last < row.seq) out.gapsByFirst.set(g.first, g);
      }
    } else if (row.type === "genesis") {
      const d = parseObject(row.data);
      out.startedAt = d ? String(d.started_at) : null;
      out.preChain = d ? Number(d.pre_chain_receipts) : 0;
    }
  }
  return out;
}

/**
 * Positions first…last are absent: the link at `last` when prunes removed exactly that
 * run (checkpoints' runs, end to end), else the first position no checkpoint covers.
 */
export function bridgeGap(
  first: number,
  last: number,
  gapsByFirst: ReadonlyMap<number, PrunedGap>,
): string | { missingFrom: number } {
  let cursor = first;
  let bridged: string | null = null;
  while (cursor <= last) {
    const g = gapsByFirst.get(cursor);
    if (!g || g.last > last) break;
    bridged = g.link;
    cursor = g.last + 1;
  }
  return cursor > last && bridged !== null ? bridged : { missingFrom: cursor };
}

/**
 * A chain being verified: the store-wide structure when made (positions, prunes, the
 * head, the store's own entries), then each receipt's entries as its rows are given
 * (receipt()), then what was never given (finish()).
 */
export class ChainVerifier {
  readonly problems: Problem[] = [];
  private readonly rows: ChainRow[];
  /** Indexed by position. */
  private readonly bySeq: ChainRow[] = [];
  /** The link each position follows from (null when positions before it are missing), by position. */
  private readonly before: (string | null)[] = [];
  private readonly byReceipt = new Map<string, ChainRow[]>();
  private readonly visited = new Set<string>();
  private readonly complete: (receiptId: string) => boolean;
  private readonly pruned: PruneRecord[] = [];
  private startedAt: string | null = null;
  /** The receipt being checked, for its problems. */
  private current = "";
  private readonly context = {
    rowAt: (seq: number) => this.bySeq[seq],
    linkBefore: (seq: number) => this.before[seq] ?? null,
    problem: (kind: ProblemKind, entry: string | null, position: number | null, detail: string) =>
      this.problem(kind, this.current, entry, position, detail),
  };
  private preChain = 0;

  constructor(private readonly input: ChainInput) {
    this.rows = Array.isArray(input.chain) ? (input.chain as ChainRow[]) : [...input.chain];
    this.complete = input.complete ?? (() => true);
    for (const row of this.rows) this.bySeq[row.seq] = row;
    const store = readStoreEntries(this.rows);
    this.pruned.push(...store.pruned);
    const gapsByFirst = store.gapsByFirst;
    this.startedAt = store.startedAt;
    this.preChain = store.preChain;
    const start = input.start ?? { seq: 0, link: ZERO_LINK };
    let seq = start.seq;
    let link = start.link;
    for (const row of this.rows) {
      if (row.seq <= seq) {
        this.problem(
          "changed",
          row.receipt_id || null,
          null,
          row.seq,
          `position ${row.seq} appears after position ${seq}: the chain was renumbered`,
        );
        link = null;
      } else if (row.seq > seq + 1) {
        link = this.bridge(seq + 1, row.seq - 1, gapsByFirst);
      }
      this.before[row.seq] = link;
      link = row.link;
      seq = row.seq;
      if (row.receipt_id !== "") {
        const list = this.byReceipt.get(row.receipt_id);
        if (list) list.push(row);
        else this.byReceipt.set(row.receipt_id, [row]);
        if (!RECEIPT_ENTRY_TYPES.has(row.type)) {
          this.problem(
            "changed",
            row.receipt_id,
            row.type,
            row.seq,
            `position ${row.seq} has an entry type sbx never writes (${row.type})`,
          );
        }
      } else this.storeEntry(row);
    }
    this.checkHead(seq, link);
  }

  /** Positions first…last are absent: pruned when checkpoints cover exactly that run (the link after it), else missing. */
  private bridge(first: number, last: number, gapsByFirst: ReadonlyMap<number, PrunedGap>): string | null {
    const bridged = bridgeGap(first, last, gapsByFirst);
    if (typeof bridged === "string") return bridged;
    const cursor = bridged.missingFrom;
    const one = cursor === last;
    this.problem(
      "missing",
      null,
      null,
      cursor,
      `${range(cursor, last)} of the store-wide chain ${one ? "is" : "are"} missing and no prune checkpoint covers ${
        one ? "it" : "them"
      }: entries were deleted`,
    );
    return null;
  }

  /** The store's own entries (genesis, checkpoint) keep their data in the chain. */
  private storeEntry(row: ChainRow): void {
    if (row.type !== "genesis" && row.type !== "checkpoint") {
      this.problem(
        "inserted",
        null,
        row.type,
        row.seq,
        `position ${row.seq} is a ${row.type} entry that names no receipt`,
      );
      return;
    }
    const before = this.before[row.seq] ?? null;
    if (
      before !== null &&
      (row.data === null || chainLink(before, envelope(row.type, "", null, row.data)) !== row.link)
    ) {
      this.problem(
        "changed",
        null,
        row.type,
        row.seq,
        `the store's ${row.type} entry (position ${row.seq}) was changed`,
      );
    }
  }

  private checkHead(seq: number, link: string | null): void {
    const head = this.input.head;
    if (head === null) {
      this.problem("missing", null, null, null, "the record of where the chain ends (its head) is missing");
    } else if (head.seq > seq) {
      const one = head.seq === seq + 1;
      this.problem(
        "missing",
        null,
        null,
        seq + 1,
        `${range(seq + 1, head.seq)} at the end of the chain ${one ? "is" : "are"} missing (the head records ${
          head.seq
        }): the newest entries were deleted`,
      );
    } else if (head.seq < seq) {
      this.problem(
        "inserted",
        null,
        null,
        head.seq + 1,
        `${range(head.seq + 1, seq)} follow the recorded head (${head.seq}): added outside sbx`,
      );
    } else if (link !== null && head.link !== link) {
      this.problem("changed", null, null, seq, `the recorded head's link differs from the link at position ${seq}`);
    }
  }

  private problem(
    kind: ProblemKind,
    receiptId: string | null,
    entry: string | null,
    position: number | null,
    detail: string,
  ): void {
    this.problems.push({ kind, receipt_id: receiptId, entry, position, detail });
  }

  /** A receipt's rows (request undefined when its row is gone); attempts in attempt order, observations in id order. */
  receipt(id: string, request: Row | undefined, attempts: readonly Row[], observations: readonly Row[]): void {
    if (!this.complete(id)) return;
    this.visited.add(id);
    this.current = id;
    verifyReceiptEntries(this.context, id, this.byReceipt.get(id) ?? [], request, attempts, observations);
  }

  /** The report; receipts the chain names whose rows were never given are deleted. */
  finish(): VerifyReport {
    for (const [id, rows] of this.byReceipt) {
      if (this.visited.has(id) || !this.complete(id)) continue;
      this.visited.add(id);
      this.problem(
        "deleted",
        id,
        null,
        rows[0]!.seq,
        `the receipt was deleted: its ${rows[0]!.type} (position ${rows[0]!.seq}) is gone`,
      );
    }
    // In chain order: each problem at its position, or at its receipt's first one.
    const at = (p: Problem) =>
      p.position ?? (p.receipt_id === null ? undefined : this.byReceipt.get(p.receipt_id)?.[0]?.seq) ?? Infinity;
    this.problems.sort((a, b) => at(a) - at(b));
    return {
      intact: this.problems.length === 0,
      receipts: this.visited.size,
      entries: this.rows.length,
      head: this.input.head,
      chain_started_at: this.startedAt,
      pre_chain: { receipts: this.preChain, sealed_at: this.startedAt },
      pruned: this.pruned,
      problems: this.problems,
    };
  }
}
