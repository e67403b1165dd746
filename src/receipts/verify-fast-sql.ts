// The SQL of verify's fast path (verify-fast.ts; docs/receipt-chain.md, "How verify is
// fast"): what SQLite assembles and counts for a range of chain positions, for a range
// of receipts, and for a position after pruned ones. Each statement reads its rows in
// one scan and looks each covered row up once.

import { ATTEMPT_FIELDS, LATER_FIELDS, OBSERVATION_FIELDS, REQUEST_FIELDS, ZERO_LINK } from "./chain.js";

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

/** Whether an entry of the receipt covers an attempt row (a) or observation row (o): what verify.ts calls chained. */
const CHAINED_ATTEMPT = `EXISTS (SELECT 1 FROM chain x WHERE x.receipt_id = a.receipt_id AND x.type = 'attempt' AND x.ref = a.attempt)`;
const CHAINED_OBSERVATION = `EXISTS (SELECT 1 FROM chain x WHERE x.receipt_id = o.receipt_id AND x.type = 'observation' AND x.ref = o.id)`;

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
 * A receipt's entry at c names an entry of the same receipt before it, or none: the one
 * fact per position from which, with the sums below, verify-fast.ts proves that each
 * receipt's entries follow one another (verify.ts: "entries were moved", "inserted",
 * "missing"). A seal must be its receipt's first entry (as the migration writes it), so
 * that a receipt has one seal at most. The store's own entries have no previous entry.
 */
const FOLLOWS = `(c.receipt_id = '' OR ((c.prev IS NULL OR (p.receipt_id = c.receipt_id AND p.seq < c.seq))
  AND (c.type <> 'seal' OR c.prev IS NULL)))`;

/**
 * What fastReport adds up about the entry at c (p the entry it names), in this order:
 * whether it follows (FOLLOWS); its position − the position it names (or 0), for a
 * receipt's entry; whether it is a receipt's entry that names none (its first); the
 * rowid of the attempt row or the id of the observation row a receipt's entry covers;
 * the attempts and observations no entry covers, of a receipt it seals.
 */
const ENTRY_FACTS = `${FOLLOWS} AS follows,
      CASE WHEN c.receipt_id <> '' THEN c.seq - coalesce(c.prev, 0) END AS step,
      (c.receipt_id <> '' AND c.prev IS NULL) AS first,
      CASE WHEN c.receipt_id <> '' AND c.type = 'attempt'
        THEN (SELECT a.rowid FROM attempts a WHERE a.receipt_id = c.receipt_id AND a.attempt = c.ref) END AS att,
      CASE WHEN c.receipt_id <> '' AND c.type = 'observation' THEN c.ref END AS obs,
      CASE WHEN c.receipt_id <> '' AND c.type = 'seal'
        THEN (SELECT count(*) FROM attempts a WHERE a.receipt_id = c.receipt_id AND NOT ${CHAINED_ATTEMPT}) END AS sealed_a,
      CASE WHEN c.receipt_id <> '' AND c.type = 'seal'
        THEN (SELECT count(*) FROM observations o WHERE o.receipt_id = c.receipt_id AND NOT ${CHAINED_OBSERVATION}) END AS sealed_o`;

/**
 * The positions first…last that follow the position before them (or are the first), in
 * one scan: 0 what each link was computed over, as one BLOB separated by newlines
 * (canonical JSON has none of its own; a newline in stored text shows as one piece too
 * many), 1 their links as one string (both aggregates read the rows in the same order),
 * 2 how many, 3 how many of those links are well formed, and ENTRY_FACTS added up:
 * 4 how many follow, 5 Σ steps, 6 firsts, 7 attempt rowids and 8 observation ids
 * (comma-separated), 9 and 10 the rows seals cover. (A position after missing ones is
 * AFTER_GAP's.)
 */
export const POSITIONS_BATCH = `SELECT CAST(group_concat(t, char(10)) AS BLOB), group_concat(link, ''), count(*),
    sum(${WELL_FORMED_LINK("link")}), sum(follows), sum(step), sum(first),
    group_concat(att, ','), group_concat(obs, ','), sum(sealed_a), sum(sealed_o)
  FROM (
    SELECT c.link AS link, ${hashedSql(`CASE WHEN c.seq = 1 THEN '${ZERO_LINK}' ELSE b.link END`)} AS t,
      ${ENTRY_FACTS}
    FROM chain c LEFT JOIN chain b ON b.seq = c.seq - 1 LEFT JOIN chain p ON p.seq = c.prev
    WHERE c.seq BETWEEN ? AND ? AND (c.seq = 1 OR b.seq IS NOT NULL))`;

/**
 * The position right after a run of missing ones (none at the position before it): 0
 * its position, 1 the position before the run, 2 its link, 3 whether well formed, 4 what
 * follows the link there, and 5–11 its ENTRY_FACTS. No row when the position is absent
 * or follows the one before it.
 */
export const AFTER_GAP = `SELECT c.seq, (SELECT max(x.seq) FROM chain x WHERE x.seq < c.seq), c.link, ${WELL_FORMED_LINK("c.link")},
    CAST(${hashedSql("''")} AS BLOB), ${ENTRY_FACTS}
  FROM chain c LEFT JOIN chain p ON p.seq = c.prev
  WHERE c.seq = ? AND c.seq > 1 AND NOT EXISTS (SELECT 1 FROM chain b WHERE b.seq = c.seq - 1)`;

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
 * What verify.ts checks of a receipt's row itself: its id is text naming a receipt (not
 * the store's ""), its body is a BLOB with a well-formed sha256, its classification
 * follows from its observations, and each id it names was recorded. Where an id or an
 * observation is compared, a value that SQLite and JavaScript could see differently (a
 * BLOB, a number in a text column) fails here, and verify.ts decides.
 */
const ROW_HOLDS = `(typeof(r.receipt_id) = 'text' AND r.receipt_id <> '' AND typeof(r.body) = 'blob'
  AND ${WELL_FORMED_LINK("r.body_sha256")} AND r.classification IS ${DERIVED_CLASSIFICATION}
  AND NOT ${UNRECORDED("execution_id")} AND NOT ${UNRECORDED("process_id")} AND NOT ${UNRECORDED("request_id")})`;

/** Receipts read a batch at a time: this many. */
export const RECEIPTS_PER_BATCH = 2048;

/**
 * Receipts with rowids after ? up to ?, RECEIPTS_PER_BATCH at most, in one scan:
 * 0 their bodies (hex, comma-separated), 1 their recorded sha256, 2 how many, 3 the last
 * rowid read, 4 how many rows hold (ROW_HOLDS), 5 Σ of each one's last position in the
 * chain (none for a receipt the chain does not name).
 */
export const RECEIPTS_BATCH = `SELECT group_concat(hex(body), ','), group_concat(body_sha256, ''), count(*), max(rowid),
    sum(holds), sum(last)
  FROM (SELECT r.rowid AS rowid, r.body AS body, r.body_sha256 AS body_sha256, ${ROW_HOLDS} AS holds,
      (SELECT max(x.seq) FROM chain x WHERE x.receipt_id = r.receipt_id) AS last
    FROM receipts r WHERE r.rowid > ? AND r.rowid <= ? ORDER BY r.rowid LIMIT ${RECEIPTS_PER_BATCH})`;
