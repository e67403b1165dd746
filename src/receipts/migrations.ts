// Numbered, forward-only migrations of receipts.db. Never edit a released entry;
// append a new one. test/fixtures/receipts-vN.db is a database of schema N.

import type { Migration } from "../platform/sqlite.js";
import { startChain } from "./chain-log.js";

export const MIGRATIONS: readonly Migration[] = [
  // 1: receipts, attempts, observations
  `CREATE TABLE receipts (
     receipt_id      TEXT PRIMARY KEY,
     kind            TEXT NOT NULL,
     profile         TEXT NOT NULL,
     api_url         TEXT NOT NULL,
     sandbox_id      TEXT NOT NULL,
     idempotency_key TEXT NOT NULL,
     method          TEXT NOT NULL,
     path            TEXT NOT NULL,
     body            BLOB NOT NULL,
     body_sha256     TEXT NOT NULL,
     created_at      TEXT NOT NULL,
     execution_id    TEXT,
     classification  TEXT NOT NULL
   );
   CREATE INDEX receipts_by_key ON receipts (idempotency_key);
   CREATE INDEX receipts_by_execution ON receipts (execution_id);
   CREATE INDEX receipts_by_created ON receipts (created_at);
   CREATE INDEX receipts_by_classification ON receipts (classification);
   CREATE TABLE attempts (
     receipt_id    TEXT NOT NULL REFERENCES receipts (receipt_id) ON DELETE CASCADE,
     attempt       INTEGER NOT NULL,
     dispatched_at TEXT NOT NULL,
     body_sha256   TEXT NOT NULL,
     pid           INTEGER,
     PRIMARY KEY (receipt_id, attempt)
   );
   CREATE TABLE observations (
     id               INTEGER PRIMARY KEY AUTOINCREMENT,
     receipt_id       TEXT NOT NULL REFERENCES receipts (receipt_id) ON DELETE CASCADE,
     attempt          INTEGER,
     source           TEXT NOT NULL,
     at               TEXT NOT NULL,
     classification   TEXT,
     definitive       INTEGER NOT NULL DEFAULT 0,
     http_status      INTEGER,
     execution_id     TEXT,
     outcome          TEXT,
     exit_code        INTEGER,
     signal           TEXT,
     system_error     TEXT,
     record_pending   INTEGER NOT NULL DEFAULT 0,
     error_code       TEXT,
     error_message    TEXT,
     retry_after_ms   INTEGER,
     stdout           TEXT,
     stderr           TEXT,
     stdout_truncated INTEGER NOT NULL DEFAULT 0,
     stderr_truncated INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX observations_by_receipt ON observations (receipt_id, id);`,
  // 2: newest-first lists read an index in order and stop at their limit (no sort of
  // every receipt): by time, and by classification then time. These replace the
  // one-column indexes they start with.
  `CREATE INDEX receipts_by_created_id ON receipts (created_at, receipt_id);
   CREATE INDEX receipts_by_classification_created ON receipts (classification, created_at, receipt_id);
   DROP INDEX receipts_by_created;
   DROP INDEX receipts_by_classification;`,
  // 3: names say what they hold. A process start's process id and a jobs submission's
  // request id had been kept in execution_id; each gets its own column, and the rows
  // already written move there. A receipt sent where no profile points had profile
  // ""; it is NULL (the column, NOT NULL until now, is rebuilt as nullable).
  `ALTER TABLE receipts ADD COLUMN process_id TEXT;
   ALTER TABLE receipts ADD COLUMN request_id TEXT;
   ALTER TABLE observations ADD COLUMN process_id TEXT;
   ALTER TABLE observations ADD COLUMN request_id TEXT;
   UPDATE observations SET process_id = execution_id, execution_id = NULL
     WHERE execution_id IS NOT NULL
       AND receipt_id IN (SELECT receipt_id FROM receipts WHERE kind = 'process_start');
   UPDATE observations SET request_id = execution_id, execution_id = NULL
     WHERE execution_id IS NOT NULL
       AND receipt_id IN (SELECT receipt_id FROM receipts WHERE kind = 'jobs_submit');
   UPDATE receipts SET process_id = execution_id, execution_id = NULL
     WHERE kind = 'process_start' AND execution_id IS NOT NULL;
   UPDATE receipts SET request_id = execution_id, execution_id = NULL
     WHERE kind = 'jobs_submit' AND execution_id IS NOT NULL;
   CREATE INDEX receipts_by_process ON receipts (process_id);
   ALTER TABLE receipts ADD COLUMN profile_name TEXT;
   UPDATE receipts SET profile_name = NULLIF(profile, '');
   ALTER TABLE receipts DROP COLUMN profile;
   ALTER TABLE receipts RENAME COLUMN profile_name TO profile;`,
  // 4: the receipt chain (docs/receipt-chain.md): its tables, a genesis entry, and a
  // seal over each receipt already stored (nothing stored is rewritten).
  (db) => startChain(db, new Date()),
  // 5: the backend boot an answer named (docs/protocol.md, "Ownership fences"): what a
  // receipt keeps of its handle. Hashed only when set (chain.ts, LATER_FIELDS), so the
  // entries of observations stored before it keep their links.
  "ALTER TABLE observations ADD COLUMN boot TEXT;",
  // 6: why the command ended beyond its exit, as the answer said (`out_of_memory`: its
  // sandbox's memory limit). Hashed only when set (chain.ts, LATER_FIELDS).
  "ALTER TABLE observations ADD COLUMN end_reason TEXT;",
  // 7: the job whose end an observation of a jobs submission carries (classify-jobs.ts).
  // Hashed only when set (chain.ts, LATER_FIELDS).
  "ALTER TABLE observations ADD COLUMN job_id TEXT;",
  // 8: the MCP tool call a receipt was made for (sbx mcp, docs/agents.md): the tool's name
  // and the client's request id. Part of the request entry, hashed only when set
  // (chain.ts, LATER_FIELDS), so receipts hashed before them keep their links.
  `ALTER TABLE receipts ADD COLUMN mcp_tool TEXT;
   ALTER TABLE receipts ADD COLUMN mcp_request_id TEXT;`,
  // 9: the image digest the sandbox ran on, as the execution's record said (docs/images.md,
  // "Evidence"). Hashed only when set (chain.ts, LATER_FIELDS).
  "ALTER TABLE observations ADD COLUMN image_digest TEXT;",
  // 10: what the command used, as the answer said (its `usage` as JSON text; docs/operations.md,
  // "Per-command usage"). Hashed only when set (chain.ts, LATER_FIELDS).
  "ALTER TABLE observations ADD COLUMN usage TEXT;",
  // 11: the connections the sandbox's egress proxy refused while the command ran, as the
  // answer said (its `egress_denied` as JSON text; docs/network.md, "Evidence"). Hashed
  // only when set (chain.ts, LATER_FIELDS).
  "ALTER TABLE observations ADD COLUMN egress_denied TEXT;",
];
