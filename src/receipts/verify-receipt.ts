// One receipt's entries checked against the rows they cover (verify.ts walks the
// store-wide chain and calls this for each receipt): each position's link recomputed
// from the row, the order of the receipt's entries, and the rows the chain never saw.

import crypto from "node:crypto";
import {
  ATTEMPT_FIELDS,
  chainLink,
  type EntryType,
  envelope,
  OBSERVATION_FIELDS,
  REQUEST_FIELDS,
  rowData,
  sealData,
} from "./chain.js";
import type { Classification } from "./classifications.js";
import { decidingObservation } from "./classify.js";
import type { ChainRow, ProblemKind } from "./verify.js";

export type Row = Record<string, unknown>;

/** The ids a receipt's row keeps of what its request created, each learned from an entry. */
const ID_COLUMNS = ["execution_id", "process_id", "request_id"] as const;

export interface ReceiptContext {
  rowAt(seq: number): ChainRow | undefined;
  /** The link a position follows from; null when it cannot be known (positions before it missing). */
  linkBefore(seq: number): string | null;
  problem(kind: ProblemKind, entry: string | null, position: number | null, detail: string): void;
}

const sha256Hex =
  typeof crypto.hash === "function"
    ? (b: Uint8Array): string => crypto.hash("sha256", b, "hex")
    : (b: Uint8Array): string => crypto.createHash("sha256").update(b).digest("hex");

function executionIdOf(data: string | null): string | null {
  try {
    const v = JSON.parse(data ?? "null") as { execution_id?: unknown } | null;
    return typeof v?.execution_id === "string" ? v.execution_id : null;
  } catch {
    return null;
  }
}

/** Whether data placed at this position, after this entry, gives the link recorded there. */
function linksAt(ctx: ReceiptContext, row: ChainRow, id: string, data: string): boolean | null {
  const before = ctx.linkBefore(row.seq);
  if (before === null) return null;
  const prev = row.prev === null ? null : (ctx.rowAt(row.prev)?.link ?? undefined);
  if (prev === undefined) return null;
  return chainLink(before, envelope(row.type as EntryType, id, prev, data)) === row.link;
}

export function verifyReceiptEntries(
  ctx: ReceiptContext,
  id: string,
  rows: readonly ChainRow[],
  request: Row | undefined,
  attempts: readonly Row[],
  observations: readonly Row[],
): void {
  if (rows.length === 0) {
    if (request) ctx.problem("inserted", null, null, "the receipt is not in the chain: it was added outside sbx");
    else {
      const n = attempts.length + observations.length;
      ctx.problem("inserted", null, null, `${n} row${n === 1 ? "" : "s"} of a receipt the chain never recorded`);
    }
    return;
  }
  if (!request) {
    const first = rows[0]!;
    const left = attempts.length + observations.length;
    ctx.problem(
      "deleted",
      null,
      first.seq,
      `the receipt was deleted: its ${first.type} (position ${first.seq}) is gone${
        left > 0 ? `; ${left} of its attempts and observations remain` : ""
      }`,
    );
    return;
  }

  // Receipts have a handful of entries: arrays searched in place beat maps built per receipt.
  const chainedAttempt = (n: unknown) => rows.some((r) => r.type === "attempt" && r.ref === Number(n));
  const chainedObservation = (n: unknown) => rows.some((r) => r.type === "observation" && r.ref === Number(n));
  const sealed = rows.some((r) => r.type === "seal");
  const unchainedAttempts = attempts.filter((a) => !chainedAttempt(a.attempt));
  const unchainedObservations = observations.filter((o) => !chainedObservation(o.id));

  /** What each entry covers, by its index in rows (undefined: its row is gone). */
  const covered: (Row | undefined)[] = [];
  const label = (i: number): string => {
    const row = rows[i]!;
    switch (row.type) {
      case "seal":
        return "pre-chain content (sealed)";
      case "attempt":
        return `attempt ${row.ref}`;
      case "observation": {
        let n = 0;
        for (let j = 0; j <= i; j++) if (rows[j]!.type === "observation") n++;
        const o = covered[i];
        return `observation ${n}${o ? ` (${String(o.source)})` : ""}`;
      }
      case "execution_id":
        return "execution id";
      default:
        return row.type;
    }
  };
  const mismatched: number[] = [];
  /** Observations that verified, with the position they were recorded at. */
  const authentic: Array<[number, Row]> = [];
  /** Every id the entries recorded (execution, process, request ids): what the receipt's own columns may name. */
  const recordedIds: string[] = [];
  const noteIds = (o: Row) => {
    for (const k of ID_COLUMNS) if (typeof o[k] === "string") recordedIds.push(`${k}:${o[k]}`);
  };
  let sealIntact = false;
  let previous: number | null = null;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    let data: string | undefined;
    switch (row.type) {
      case "request":
        data = rowData(request, REQUEST_FIELDS);
        break;
      case "seal":
        data = sealData(request, unchainedAttempts, unchainedObservations);
        for (const o of unchainedObservations) noteIds(o);
        break;
      case "attempt": {
        const a = attempts.find((x) => Number(x.attempt) === row.ref);
        covered[i] = a;
        data = a && rowData(a, ATTEMPT_FIELDS);
        break;
      }
      case "observation": {
        const o = observations.find((x) => Number(x.id) === row.ref);
        covered[i] = o;
        data = o && rowData(o, OBSERVATION_FIELDS);
        if (o) noteIds(o);
        break;
      }
      case "execution_id": {
        const exe = executionIdOf(row.data);
        if (exe !== null) recordedIds.push(`execution_id:${exe}`);
        data = row.data ?? undefined;
        break;
      }
    }
    if (row.prev !== previous) {
      const moved = row.prev !== null && rows.some((r) => r.seq === row.prev);
      const what = label(i);
      ctx.problem(
        moved ? "reordered" : row.prev === null ? "inserted" : "missing",
        what,
        row.seq,
        moved
          ? `${what} (position ${row.seq}) no longer follows the entry it was recorded after (position ${row.prev}): entries were moved`
          : row.prev === null
            ? `${what} (position ${row.seq}) was recorded as the receipt's first entry, but entries come before it: they were inserted`
            : `the entry recorded before ${what} (position ${row.prev}) is gone from the receipt`,
      );
    }
    previous = row.seq;
    if (data === undefined) {
      const what = label(i);
      ctx.problem(
        "deleted",
        what,
        row.seq,
        row.type === "execution_id"
          ? `the execution id recorded at position ${row.seq} is unreadable`
          : `${what} (position ${row.seq}) was deleted`,
      );
      continue;
    }
    const ok = linksAt(ctx, row, id, data);
    if (ok === false) mismatched.push(i);
    else if (row.type === "observation") authentic.push([row.seq, covered[i]!]);
    else if (row.type === "seal") sealIntact = true;
  }

  // A changed entry whose content is another row's, as recorded here, was moved, not edited.
  for (const i of mismatched) {
    const row = rows[i]!;
    const what = label(i);
    const pool =
      mismatched.length < 2 ? [] : row.type === "observation" ? observations : row.type === "attempt" ? attempts : [];
    const fields = row.type === "observation" ? OBSERVATION_FIELDS : ATTEMPT_FIELDS;
    const found = pool.find((candidate) => linksAt(ctx, row, id, rowData(candidate, fields)) === true);
    if (found) {
      const where =
        row.type === "observation" ? `the row with id ${String(found.id)}` : `attempt row ${String(found.attempt)}`;
      ctx.problem(
        "reordered",
        what,
        row.seq,
        `${what} (position ${row.seq}) is now ${where}: rows were swapped or renumbered`,
      );
      if (row.type === "observation") authentic.push([row.seq, found]);
    } else {
      ctx.problem(
        "changed",
        what,
        row.seq,
        row.type === "seal"
          ? `what the receipt held before the chain began was changed after it was sealed (position ${row.seq})`
          : `${what} (position ${row.seq}) was changed: it no longer matches what was recorded`,
      );
    }
  }

  if (!sealed) {
    for (const a of unchainedAttempts) {
      const label = `attempt ${String(a.attempt)}`;
      ctx.problem("inserted", label, null, `${label} is not in the chain: it was added outside sbx`);
    }
    for (const o of unchainedObservations) {
      ctx.problem(
        "inserted",
        `observation id ${String(o.id)} (${String(o.source)})`,
        null,
        `the observation with id ${String(o.id)} (${String(o.source)}, ${String(o.at)}) is not in the chain: it was added outside sbx`,
      );
    }
  }

  // What the receipt's row says about itself must follow from what was recorded.
  const body = request.body instanceof Uint8Array ? request.body : null;
  if (body === null || sha256Hex(body) !== request.body_sha256) {
    ctx.problem("changed", "request body", rows[0]!.seq, "the request body no longer matches its recorded sha256");
  }
  // The classification column (what list and prune go by) must follow from the
  // observations: from those that verified, in the order they were recorded, or from
  // the rows as they are now (when a row itself was changed, that is the problem named).
  const verified = [
    ...(sealIntact ? unchainedObservations : []),
    ...authentic.sort((x, y) => x[0] - y[0]).map(([, o]) => o),
  ];
  const derive = (list: readonly Row[]) =>
    decidingObservation(
      list.map((o) => ({
        classification: (o.classification ?? null) as Classification | null,
        definitive: o.definitive === 1,
      })),
    )?.classification ?? "dispatched";
  const expected = derive(verified);
  if (request.classification !== expected && request.classification !== derive(observations)) {
    ctx.problem(
      "changed",
      "classification",
      null,
      `the receipt says ${String(request.classification)} but its recorded observations say ${expected}`,
    );
  }
  for (const k of ID_COLUMNS) {
    const v = request[k];
    if (v !== null && v !== undefined && !recordedIds.includes(`${k}:${String(v)}`)) {
      const what = k.replace("_id", "");
      ctx.problem(
        "changed",
        k.replace("_", " "),
        null,
        `the receipt names ${what} ${String(v)}, which none of its entries recorded`,
      );
    }
  }
}
