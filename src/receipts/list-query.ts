// The newest-first list of receipts as one SQL query (test/unit/receipt-list-plan.test.ts
// checks that SQLite answers it from an index, stopping at the limit).

import type { Classification } from "./classifications.js";

export interface ListFilter {
  classification?: Classification | readonly Classification[];
  limit?: number;
  since?: string;
}

const NEWEST_FIRST = "ORDER BY created_at DESC, receipt_id DESC";

/**
 * The newest-first list, as SQL that reads an index in order and stops at the limit
 * (test/unit/receipt-list-plan.test.ts checks the plan): by time alone, or one
 * index range per classification, merged.
 */
export function listQuery(filter: ListFilter): { sql: string; params: unknown[] } {
  const limit = filter.limit === undefined ? "" : " LIMIT ?";
  const since = filter.since === undefined ? [] : [filter.since];
  const sinceSql = filter.since === undefined ? "" : " AND created_at >= ?";
  const limits = filter.limit === undefined ? [] : [filter.limit];
  if (filter.classification === undefined) {
    const where = filter.since === undefined ? "" : " WHERE created_at >= ?";
    return { sql: `SELECT receipt_id FROM receipts${where} ${NEWEST_FIRST}${limit}`, params: [...since, ...limits] };
  }
  const cs = typeof filter.classification === "string" ? [filter.classification] : [...new Set(filter.classification)];
  if (cs.length === 0) return { sql: "SELECT receipt_id FROM receipts WHERE 0", params: [] };
  const branch = `SELECT * FROM (SELECT receipt_id, created_at FROM receipts WHERE classification = ?${sinceSql} ${NEWEST_FIRST}${limit})`;
  return {
    sql: `SELECT receipt_id FROM (${cs.map(() => branch).join(" UNION ALL ")}) ${NEWEST_FIRST}${limit}`,
    params: [...cs.flatMap((c) => [c, ...since, ...limits]), ...limits],
  };
}
