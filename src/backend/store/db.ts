// The backend's own database (<dataDir>/backend.db): the one place that opens it and
// runs its migrations (migrations.ts). Each domain owns the statements of its tables
// (sandboxes/store.ts, executions/store.ts, processes/store.ts, jobs/store.ts,
// http/idempotency.ts) and prepares them here; callers that need several writes to
// land together wrap them in `transaction`.

import { type Database, migrate, openDatabase, type Statement } from "../../platform/sqlite.js";
import { MIGRATIONS } from "./migrations.js";
import { type IdPrefix, newUniqueId, prefixRange } from "../../common/ids.js";
import { randomBytes } from "../../platform/random.js";
import { DaemonStartError } from "../errors.js";

/** Problems SQLite's quick check lists, at most (the first says enough). */
const CHECK_PROBLEMS_MAX = 3;

/**
 * backend.db that SQLite finds damaged: refused at start, with the file named (exit 74
 * for the sbx that started the daemon: nothing ran). A backend serving from it answered
 * 500 to everything and left every command "may have run".
 */
function damaged(file: string, problem: string): DaemonStartError {
  return new DaemonStartError(
    "database_damaged",
    `the backend's database ${file} is damaged (${problem}); the backend refuses to serve from it`,
    `keep it for inspection and start afresh: mv ${file} ${file}.damaged (the sandboxes and records of past work kept there are lost; your receipts are not)`,
  );
}

function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB");
}

/** SQLite's quick check (every page and index entry read once): null when it says ok. */
function quickCheck(db: Database): string | null {
  const rows = db.pragma(`quick_check(${CHECK_PROBLEMS_MAX})`) as Array<Record<string, unknown>>;
  const said = rows.map((r) => String(Object.values(r)[0] ?? "")).filter((t) => t !== "");
  if (said.length === 1 && said[0] === "ok") return null;
  // One line: SQLite's own words, without its "*** in database main ***" heading.
  const words = said
    .join("\n")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !/^\*\*\* in database \w+ \*\*\*$/.test(l));
  return words.slice(0, CHECK_PROBLEMS_MAX).join("; ") || "SQLite's quick check failed";
}

/** The tables whose ids a prefix may name, and their id columns (each unique, so indexed). */
const ID_COLUMNS = {
  sandboxes: "sandbox_id",
  executions: "execution_id",
  processes: "process_id",
  jobs: "job_id",
} as const;
export type IdTable = keyof typeof ID_COLUMNS;
const ID_PREFIXES: Record<Exclude<IdTable, "jobs">, IdPrefix> = {
  sandboxes: "sbx",
  executions: "exe",
  processes: "prc",
};

/**
 * A table's columns as its row type names them: the record must name every field of
 * `Row` and nothing else (the type checker says so), and a test compares each list
 * with the table itself (test/backend/schema.test.ts, PRAGMA table_info).
 */
export function columnsOf<Row>(names: Record<keyof Row, true>): ReadonlyArray<keyof Row & string> {
  return Object.keys(names) as Array<keyof Row & string>;
}

/**
 * A domain's row access over the database (sandboxes/store.ts, executions/store.ts…):
 * its statements prepared once each, and the database's transaction and state.
 */
export abstract class TableAccess {
  constructor(readonly db: BackendStore) {}

  get isClosed(): boolean {
    return this.db.isClosed;
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn);
  }
}

export class BackendStore {
  private readonly db: Database;
  private readonly statements = new Map<string, Statement<unknown>>();
  private closed = false;

  /** Opens backend.db and checks it (quick_check) before migrating; throws DaemonStartError `database_damaged`. */
  constructor(file: string) {
    let db: Database | null = null;
    try {
      db = openDatabase(file);
      const problem = quickCheck(db);
      if (problem !== null) throw damaged(file, problem);
      migrate(db, MIGRATIONS);
    } catch (err) {
      try {
        db?.close();
      } catch {
        // the open or the check failed already; that is the error to report
      }
      throw isCorruption(err) ? damaged(file, (err as Error).message) : err;
    }
    this.db = db;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.statements.clear();
    this.db.close();
  }

  /** A statement prepared once per SQL text, for the row access a domain keeps beside itself. */
  statement<Row>(sql: string): Statement<Row> {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<unknown>(sql);
      this.statements.set(sql, stmt);
    }
    return stmt as Statement<Row>;
  }

  /**
   * Ids of `table` that start with `prefix`, in id order, at most `limit`: a range on
   * the id's unique index, never a scan. For a new id's short form (src/common/ids.ts).
   */
  idsStartingWith(table: IdTable, prefix: string, limit: number): string[] {
    const column = ID_COLUMNS[table];
    const { lo, hi } = prefixRange(prefix);
    return this.statement<Record<string, string>>(
      `SELECT ${column} FROM ${table} WHERE ${column} >= ? AND ${column} < ? ORDER BY ${column} LIMIT ?`,
    )
      .all(lo, hi, limit)
      .map((r) => r[column]!);
  }

  /** A new id of `table` whose short form no id of it has (drawn again while one does). */
  newId(table: Exclude<IdTable, "jobs">): string {
    return newUniqueId(ID_PREFIXES[table], (short) => this.idsStartingWith(table, short, 1).length > 0, randomBytes);
  }

  /** Bytes the database holds in use (free pages not counted). */
  usedBytes(): number {
    const pragma = (name: string) => Number(Object.values((this.db.pragma(name) as object[])[0] ?? {})[0] ?? 0);
    return (pragma("page_count") - pragma("freelist_count")) * pragma("page_size");
  }
}
