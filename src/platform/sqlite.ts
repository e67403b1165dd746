// The runtime seam for SQLite. On Node this is better-sqlite3; the single binary
// compiled with Bun would use bun:sqlite behind the same small interface. Nothing
// else in the code base imports a SQLite driver.

import fs from "node:fs";
import { isBunRuntime } from "./runtime.js";
import { LocalStateError } from "../common/errors.js";
import { ExitCodes } from "../common/exit-codes.js";

export type SqlValue = string | number | bigint | Buffer | Uint8Array | null;

export interface Statement<Row = Record<string, unknown>> {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): Row | undefined;
  all(...params: unknown[]): Row[];
  /** Rows one at a time (several statements may be iterated at once). */
  iterate(...params: unknown[]): IterableIterator<Row>;
  /**
   * Rows as arrays of column values, in the SELECT's order (no object per row: for
   * reading a whole table). BLOBs may come as Uint8Array rather than Buffer.
   */
  values(...params: unknown[]): Iterable<unknown[]>;
}

export interface Database {
  exec(sql: string): void;
  prepare<Row = Record<string, unknown>>(sql: string): Statement<Row>;
  /** Runs fn inside BEGIN IMMEDIATE … COMMIT (a write lock is taken up front). */
  transaction<T>(fn: () => T): T;
  pragma(sql: string): unknown;
  close(): void;
}

export interface OpenOptions {
  /** File mode for a newly created database file (and its -wal/-shm). */
  mode?: number;
  busyTimeoutMs?: number;
  /** Write-ahead logging (the default); false keeps SQLite's rollback journal (a lock file). */
  wal?: boolean;
  /** Only to read a database that exists, as it is (neither created, nor its mode or journal changed). */
  readOnly?: boolean;
}

/** Node's require from here (better-sqlite3 as installed), made when first needed: never in the binary. */
let nodeRequire: NodeJS.Require | null = null;
function requireHere(): NodeJS.Require {
  nodeRequire ??= process.getBuiltinModule("node:module").createRequire(import.meta.url);
  return nodeRequire;
}

/**
 * The same database, each statement prepared once per SQL text (preparing is most of
 * the cost of a small query). Safe because a Statement here only runs to completion
 * (run, get, all: no iterator is ever left open on one).
 */
export function preparingOnce(db: Database): Database {
  const statements = new Map<string, Statement<unknown>>();
  return {
    ...db,
    prepare: <Row>(sql: string): Statement<Row> => {
      let stmt = statements.get(sql);
      if (stmt === undefined) {
        stmt = db.prepare<unknown>(sql);
        statements.set(sql, stmt);
      }
      return stmt as Statement<Row>;
    },
    close: () => {
      statements.clear();
      db.close();
    },
  };
}

/** Opens (creating if needed) a WAL database with a busy timeout, private to its user by default. */
export function openDatabase(file: string, opts: OpenOptions = {}): Database {
  if (opts.readOnly === true) {
    const db = isBunRuntime() ? openBun(file, true) : openBetterSqlite3(file, true);
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
    return db;
  }
  const mode = opts.mode ?? 0o600;
  // Create the file ourselves so it is born with the right mode (no window at 0644).
  const fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_RDWR, mode);
  fs.closeSync(fd);
  fs.chmodSync(file, mode);
  const db = isBunRuntime() ? openBun(file) : openBetterSqlite3(file);
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
  if (opts.wal !== false) db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  for (const suffix of ["-wal", "-shm"]) {
    try {
      fs.chmodSync(file + suffix, mode);
    } catch {
      // not created yet; SQLite creates them with the main file's mode
    }
  }
  return db;
}

type BetterSqlite3 = typeof import("better-sqlite3");
let imported: BetterSqlite3 | null = null;

/**
 * On Node, imports better-sqlite3 (./better-sqlite3.ts) for the next openDatabase: the
 * Node bundle then has it in a chunk rather than in a dozen files of CommonJS. Nothing
 * under Bun. Without it, openDatabase requires the package as it is installed.
 */
export async function preloadSqliteDriver(): Promise<void> {
  if (isBunRuntime() || imported !== null) return;
  imported = (await import("./better-sqlite3.js")).default;
}

/** The README section that says how to install where better-sqlite3 must be built from source. */
export const INSTALL_OFFLINE_SECTION = "Installing offline or behind a firewall";

/**
 * better-sqlite3 that cannot be loaded: its native addon was never built (npm install
 * could neither download a prebuilt one nor compile it) or was built for another Node.
 * Said as an unusable store (74) with the README section to follow, never as a bug.
 */
function driverMissing(err: unknown): LocalStateError {
  const why = (err as Error)?.message?.split("\n")[0] ?? String(err);
  return new LocalStateError(
    "sqlite_driver_missing",
    `the SQLite driver sbx uses on Node (better-sqlite3's native addon) cannot be loaded: ${why}`,
    ExitCodes.storeUnusable,
    `install it again; where it must be built from source (offline, behind a firewall) see README.md, "${INSTALL_OFFLINE_SECTION}"`,
  );
}

/** True for a failure to load the driver itself, not to open a database with it. */
function isDriverLoadFailure(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === "string" && code.startsWith("SQLITE_")) return false;
  const message = (err as Error)?.message ?? "";
  return (
    code === "MODULE_NOT_FOUND" ||
    code === "ERR_DLOPEN_FAILED" ||
    /bindings file|NODE_MODULE_VERSION|better_sqlite3\.node/.test(message)
  );
}

/** Node: better-sqlite3 (a native addon). */
function openBetterSqlite3(file: string, readOnly = false): Database {
  const addon = betterSqlite3Addon();
  let db: InstanceType<BetterSqlite3>;
  try {
    // A bundled copy finds the addon only by its path (its own search would start from the bundle).
    const BetterSqlite3 =
      imported !== null && addon !== null ? imported : (requireHere()("better-sqlite3") as BetterSqlite3);
    db = new BetterSqlite3(file, {
      ...(addon === null ? {} : { nativeBinding: addon }),
      ...(readOnly ? { readonly: true, fileMustExist: true } : {}),
    });
  } catch (err) {
    throw isDriverLoadFailure(err) ? driverMissing(err) : err;
  }
  return {
    exec: (sql) => {
      db.exec(sql);
    },
    prepare: <Row>(sql: string): Statement<Row> => {
      const st = db.prepare(sql) as unknown as Omit<Statement<Row>, "values">;
      let raw: { iterate(...params: unknown[]): IterableIterator<unknown[]> } | null = null;
      return {
        run: (...params) => st.run(...params),
        get: (...params) => st.get(...params),
        all: (...params) => st.all(...params),
        iterate: (...params) => st.iterate(...params),
        values: (...params) => {
          // A statement of its own: raw mode is a setting of the statement.
          raw ??= db.prepare(sql).raw(true) as unknown as typeof raw & object;
          return raw.iterate(...params);
        },
      };
    },
    transaction: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    pragma: (sql) => db.pragma(sql),
    close: () => db.close(),
  };
}

let addonPath: string | null | undefined;

/**
 * Where better-sqlite3's compiled addon is (its install builds it there). Left to
 * itself, better-sqlite3 finds it through the `bindings` package (two more modules,
 * a stack trace read to find the package, then a list of paths tried): about a
 * millisecond of every command that opens a store; given the path, it loads the
 * addon from there. Null when it is elsewhere (a debug build): better-sqlite3 then
 * looks for it as it would.
 */
function betterSqlite3Addon(): string | null {
  if (addonPath === undefined) {
    try {
      addonPath = requireHere().resolve("better-sqlite3/build/Release/better_sqlite3.node");
    } catch {
      addonPath = null;
    }
  }
  return addonPath;
}

interface BunStatement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
  values(...params: unknown[]): unknown[][];
}

interface BunDatabase {
  exec(sql: string): void;
  prepare(sql: string): BunStatement;
  query(sql: string): BunStatement;
  transaction<T>(fn: () => T): { immediate(): T };
  close(): void;
}

/** BLOBs come back as Uint8Array under Bun; callers expect Buffers, as on Node. */
function withBuffers<Row>(row: unknown): Row {
  if (row && typeof row === "object") {
    for (const [k, v] of Object.entries(row)) {
      if (v instanceof Uint8Array && !Buffer.isBuffer(v)) (row as Record<string, unknown>)[k] = Buffer.from(v);
    }
  }
  return row as Row;
}

/** The Bun-compiled binary: bun:sqlite, with named parameters bound without prefixes (strict). */
function openBun(file: string, readOnly = false): Database {
  // Bun's own module, without node:module's createRequire (a cost of the binary's start).
  const { Database: BunSqlite } = (process.getBuiltinModule as (id: string) => unknown)("bun:sqlite") as {
    Database: new (file: string, opts: { create?: boolean; readonly?: boolean; strict: boolean }) => BunDatabase;
  };
  const db = new BunSqlite(file, readOnly ? { readonly: true, strict: true } : { create: true, strict: true });
  return {
    exec: (sql) => db.exec(sql),
    prepare: <Row>(sql: string): Statement<Row> => {
      const st = db.prepare(sql);
      return {
        run: (...params) => st.run(...params),
        get: (...params) => {
          const row = st.get(...params);
          return row === null || row === undefined ? undefined : withBuffers<Row>(row);
        },
        all: (...params) => st.all(...params).map((r) => withBuffers<Row>(r)),
        iterate: function* (...params) {
          for (const r of st.iterate(...params)) yield withBuffers<Row>(r);
        },
        values: (...params) => st.values(...params),
      };
    },
    transaction: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    // better-sqlite3's pragma() returns rows for reads; so does a query here.
    pragma: (sql) => db.query(`PRAGMA ${sql}`).all(),
    close: () => db.close(),
  };
}

/** Thrown by migrate for a database written by a newer sbx (code SBX_SCHEMA_NEWER). */
export class SchemaTooNew extends Error {
  readonly code = "SBX_SCHEMA_NEWER";
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(`database schema version ${found} is newer than this sbx understands (${known})`);
  }
}

/** One schema step: SQL, or code for what SQL cannot do (run inside the same transaction). */
export type Migration = string | ((db: Database) => void);

/**
 * Applies numbered, forward-only migrations recorded in PRAGMA user_version. A
 * database already up to date is only read: opening it never waits for a writer.
 */
export function migrate(db: Database, migrations: readonly Migration[]): void {
  const version = () => Number((db.pragma("user_version") as Array<{ user_version: number }>)[0]?.user_version ?? 0);
  const before = version();
  if (before > migrations.length) throw new SchemaTooNew(before, migrations.length);
  if (before === migrations.length) return;
  db.transaction(() => {
    // Read again under the write lock: another process may have migrated meanwhile.
    const current = version();
    if (current > migrations.length) throw new SchemaTooNew(current, migrations.length);
    for (let v = current; v < migrations.length; v++) {
      const step = migrations[v]!;
      if (typeof step === "string") db.exec(step);
      else step(db);
      db.pragma(`user_version = ${v + 1}`);
    }
  });
}

/**
 * An exclusive lock on a file, held until released or until its process dies (the
 * kernel drops it: never stale). SQLite's own file locking (fcntl), as Node has no
 * flock: `BEGIN EXCLUSIVE` on a rollback-journal database, held open. Null when
 * another holder has it.
 */
export function tryExclusiveLock(file: string): { release(): void } | null {
  let db: Database | null = null;
  try {
    db = openDatabase(file, { mode: 0o600, busyTimeoutMs: 0, wal: false });
    db.exec("BEGIN EXCLUSIVE");
  } catch (err) {
    db?.close();
    // Even opening reads the file, which another holder's lock refuses.
    if (/^SQLITE_(BUSY|LOCKED)/.test(String((err as { code?: unknown }).code))) return null;
    throw err;
  }
  const held = db;
  let holding = true;
  return {
    release: () => {
      if (!holding) return;
      holding = false;
      try {
        held.exec("ROLLBACK");
      } finally {
        held.close();
      }
    },
  };
}
