// The backend's own database (<dataDir>/backend.db): numbered migrations and typed
// row access. Each public method is one unit of work; callers that need several
// writes to land together wrap them in `transaction`.

import type { ExecutionRecord, Isolation, Outcome, ProcessEndReason, ProcessState } from "../../protocol/types.js";
import { type Database, migrate, openDatabase, type Statement } from "../../platform/sqlite.js";

/** Forward-only; never edit a released entry, append a new one. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE sandboxes (
    sandbox_id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    isolation TEXT NOT NULL,
    network INTEGER NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE executions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    execution_id TEXT NOT NULL UNIQUE,
    sandbox_id TEXT NOT NULL REFERENCES sandboxes(sandbox_id) ON DELETE CASCADE,
    idempotency_key TEXT,
    command TEXT NOT NULL,
    working_dir TEXT NOT NULL,
    timeout_ms INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    exit_code INTEGER,
    signal TEXT,
    system_error TEXT,
    record_pending INTEGER NOT NULL DEFAULT 0,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    stdout TEXT NOT NULL DEFAULT '',
    stderr TEXT NOT NULL DEFAULT '',
    stdout_bytes INTEGER NOT NULL DEFAULT 0,
    stderr_bytes INTEGER NOT NULL DEFAULT 0,
    stdout_truncated INTEGER NOT NULL DEFAULT 0,
    stderr_truncated INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    duration_ms INTEGER,
    last_event_id INTEGER NOT NULL DEFAULT 0,
    pgid INTEGER,
    pgid_start_time TEXT
  );
  CREATE INDEX executions_by_sandbox ON executions (sandbox_id, seq);
  CREATE INDEX executions_by_key ON executions (sandbox_id, idempotency_key);
  CREATE INDEX executions_pending ON executions (outcome) WHERE outcome = 'pending';
  CREATE TABLE idempotency_keys (
    caller TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    key TEXT NOT NULL,
    body_sha256 TEXT NOT NULL,
    status INTEGER NOT NULL,
    response TEXT,
    execution_id TEXT REFERENCES executions(execution_id) ON DELETE CASCADE,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (caller, method, path, key)
  );
  CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at_ms);
  `,
  // Execution event logs. stdout_end/stderr_end: each stream's byte offset covered by
  // the events up to this one (what a `reset` at this event holds). A base row
  // remembers what trimming removed.
  `
  CREATE TABLE execution_events (
    execution_id TEXT NOT NULL REFERENCES executions(execution_id) ON DELETE CASCADE,
    sequence INTEGER NOT NULL,
    type TEXT NOT NULL,
    at TEXT NOT NULL,
    data TEXT NOT NULL,
    stdout_end INTEGER NOT NULL,
    stderr_end INTEGER NOT NULL,
    PRIMARY KEY (execution_id, sequence)
  ) WITHOUT ROWID;
  CREATE TABLE execution_event_bases (
    execution_id TEXT PRIMARY KEY REFERENCES executions(execution_id) ON DELETE CASCADE,
    through_sequence INTEGER NOT NULL,
    stdout_end INTEGER NOT NULL,
    stderr_end INTEGER NOT NULL
  );
  `,
  // Supervised processes. command, env, restart and last_run are JSON; env is kept
  // so that "always" processes can start again after the daemon restarts.
  `
  CREATE TABLE processes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    process_id TEXT NOT NULL UNIQUE,
    sandbox_id TEXT NOT NULL REFERENCES sandboxes(sandbox_id) ON DELETE CASCADE,
    idempotency_key TEXT,
    name TEXT,
    command TEXT NOT NULL,
    working_dir TEXT NOT NULL,
    env TEXT NOT NULL,
    stdin_enabled INTEGER NOT NULL,
    timeout_ms INTEGER,
    restart TEXT NOT NULL,
    state TEXT NOT NULL,
    outcome TEXT NOT NULL,
    exit_code INTEGER,
    signal TEXT,
    end_reason TEXT,
    restarts INTEGER NOT NULL DEFAULT 0,
    restarts_in_window INTEGER NOT NULL DEFAULT 0,
    stop_requested INTEGER NOT NULL DEFAULT 0,
    os_pid INTEGER,
    pgid_start_time TEXT,
    last_run TEXT,
    next_restart_at TEXT,
    stdout_bytes INTEGER NOT NULL DEFAULT 0,
    stderr_bytes INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    first_started_at TEXT,
    started_at TEXT,
    ended_at TEXT
  );
  CREATE INDEX processes_by_sandbox ON processes (sandbox_id, seq);
  CREATE INDEX processes_by_key ON processes (sandbox_id, idempotency_key);
  CREATE INDEX processes_unended ON processes (state) WHERE state <> 'exited';
  `,
  // Retention (retention.ts): when an execution's full output files were dropped for
  // space (its record stays), and the order in which finished work goes.
  `
  ALTER TABLE executions ADD COLUMN output_dropped_at TEXT;
  CREATE INDEX executions_finished ON executions (COALESCE(finished_at, created_at)) WHERE outcome <> 'pending';
  CREATE INDEX processes_ended ON processes (COALESCE(ended_at, created_at)) WHERE state = 'exited';
  `,
  // Recovery touches only what is ours: the boot a process group was started in, and
  // what restart recovery found of it (said in the record).
  `
  ALTER TABLE executions ADD COLUMN boot_id TEXT;
  ALTER TABLE executions ADD COLUMN recovery TEXT;
  ALTER TABLE processes ADD COLUMN boot_id TEXT;
  ALTER TABLE processes ADD COLUMN recovery TEXT;
  `,
  // Jobs (jobs/store.ts). A request row holds the digest of what a request id admitted;
  // command, env, depends_on, dependency_ids and leftover_processes are JSON. A job's
  // kept output is ordered chunks: the head (`head` = 1) and a tail trimmed from its
  // front past the budget; `offset` places a chunk in the job's whole output.
  `
  CREATE TABLE job_requests (
    sandbox_id TEXT NOT NULL REFERENCES sandboxes(sandbox_id) ON DELETE CASCADE,
    request_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (sandbox_id, request_id)
  );
  CREATE TABLE jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL UNIQUE,
    sandbox_id TEXT NOT NULL REFERENCES sandboxes(sandbox_id) ON DELETE CASCADE,
    request_id TEXT NOT NULL,
    job_index INTEGER NOT NULL,
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    command TEXT NOT NULL,
    working_dir TEXT NOT NULL,
    env TEXT NOT NULL,
    stdin BLOB,
    timeout_ms INTEGER NOT NULL,
    depends_on TEXT NOT NULL,
    dependency_ids TEXT NOT NULL,
    dependency_policy TEXT NOT NULL,
    queue_key TEXT,
    status TEXT NOT NULL,
    exit_code INTEGER,
    signal TEXT,
    error TEXT,
    leftover_processes TEXT NOT NULL DEFAULT '[]',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    end_intent TEXT,
    pgid INTEGER,
    pgid_start_time TEXT,
    boot_id TEXT,
    main_exited_at TEXT,
    output_bytes INTEGER NOT NULL DEFAULT 0,
    output_omitted_bytes INTEGER NOT NULL DEFAULT 0,
    output_last_seq INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT
  );
  CREATE INDEX jobs_by_request ON jobs (sandbox_id, request_id, job_index);
  CREATE INDEX jobs_unfinished ON jobs (status) WHERE status IN ('queued', 'waiting', 'running', 'cancel_requested');
  CREATE TABLE job_output (
    job_id TEXT NOT NULL REFERENCES jobs(job_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    stream TEXT NOT NULL,
    byte_offset INTEGER NOT NULL,
    head INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (job_id, seq)
  ) WITHOUT ROWID;
  `,
  // Each sandbox's own host uid (drivers/identity.ts); null for sandboxes made before
  // it, given one when the backend starts.
  `
  ALTER TABLE sandboxes ADD COLUMN uid INTEGER;
  CREATE UNIQUE INDEX sandboxes_by_uid ON sandboxes (uid);
  `,
];

export interface SandboxRow {
  sandbox_id: string;
  name: string;
  status: string;
  isolation: Isolation;
  network: number;
  created_at: string;
  /** The sandbox's own host uid (and gid) for its commands when the backend is root. */
  uid: number | null;
}

export interface ExecutionRow {
  seq: number;
  execution_id: string;
  sandbox_id: string;
  idempotency_key: string | null;
  command: string;
  working_dir: string;
  timeout_ms: number;
  outcome: Outcome;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  record_pending: number;
  cancel_requested: number;
  stdout: string;
  stderr: string;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_truncated: number;
  stderr_truncated: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  last_event_id: number;
  pgid: number | null;
  pgid_start_time: string | null;
  /** When retention dropped its full output files for space (the record stays), or null. */
  output_dropped_at: string | null;
  /** The boot the process group was started in (/proc/sys/kernel/random/boot_id). */
  boot_id: string | null;
  /** What restart recovery found of the process group, or null. */
  recovery: string | null;
}

/** A finished execution as retention sees it. */
export interface RetainedExecution {
  execution_id: string;
  sandbox_id: string;
  ended_at: string;
}

export interface StoredContents {
  databaseBytes: number;
  executions: number;
  executionsRunning: number;
  outputsDropped: number;
  processes: number;
  processesRunning: number;
  oldestFinishedAt: string | null;
}

export interface NewExecution {
  execution_id: string;
  sandbox_id: string;
  idempotency_key: string | null;
  command: string[] | string;
  working_dir: string;
  timeout_ms: number;
  created_at: string;
}

export interface ExecutionEnd {
  outcome: Outcome;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  record_pending: boolean;
  stdout: string;
  stderr: string;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  finished_at: string | null;
  duration_ms: number | null;
}

export interface EventRow {
  execution_id: string;
  sequence: number;
  type: string;
  at: string;
  /** JSON */
  data: string;
  stdout_end: number;
  stderr_end: number;
}

/** What trimming removed: events through `through_sequence`, covering output up to the `_end` offsets. */
export interface EventBaseRow {
  execution_id: string;
  through_sequence: number;
  stdout_end: number;
  stderr_end: number;
}

export interface IdempotencyScope {
  caller: string;
  method: string;
  path: string;
  key: string;
}

export interface IdempotencyRow {
  body_sha256: string;
  status: number;
  /** The JSON answer to replay, for routes whose answer is fixed once given. */
  response: string | null;
  /** For execute: the execution the key admitted (its answer is the record as it is now). */
  execution_id: string | null;
  created_at_ms: number;
}

export interface ExecutionQuery {
  sandboxId: string;
  limit: number;
  /** Only rows older than this sequence (the cursor). */
  beforeSeq?: number;
  outcome?: Outcome;
  idempotencyKey?: string;
  /** Leave the kept output out (stdout and stderr read as ""); byte counts and truncated flags stay. */
  withoutOutput?: boolean;
}

/**
 * A table's columns as its row type names them: the record must name every field of
 * `Row` and nothing else (the type checker says so), and a test compares each list
 * with the table itself (test/backend/schema.test.ts, PRAGMA table_info).
 */
export function columnsOf<Row>(names: Record<keyof Row, true>): ReadonlyArray<keyof Row & string> {
  return Object.keys(names) as Array<keyof Row & string>;
}

export const SANDBOX_COLUMNS = columnsOf<SandboxRow>({
  sandbox_id: true,
  name: true,
  status: true,
  isolation: true,
  network: true,
  created_at: true,
  uid: true,
});

export const EXECUTION_COLUMNS = columnsOf<ExecutionRow>({
  seq: true,
  execution_id: true,
  sandbox_id: true,
  idempotency_key: true,
  command: true,
  working_dir: true,
  timeout_ms: true,
  outcome: true,
  exit_code: true,
  signal: true,
  system_error: true,
  record_pending: true,
  cancel_requested: true,
  stdout: true,
  stderr: true,
  stdout_bytes: true,
  stderr_bytes: true,
  stdout_truncated: true,
  stderr_truncated: true,
  created_at: true,
  started_at: true,
  finished_at: true,
  duration_ms: true,
  last_event_id: true,
  pgid: true,
  pgid_start_time: true,
  output_dropped_at: true,
  boot_id: true,
  recovery: true,
});

/** Every column of `executions` but the kept output, which reads as "". */
const EXECUTION_COLUMNS_WITHOUT_OUTPUT = EXECUTION_COLUMNS.map((c) =>
  c === "stdout" || c === "stderr" ? `'' AS ${c}` : c,
).join(", ");

export function toExecutionRecord(row: ExecutionRow): ExecutionRecord {
  return {
    execution_id: row.execution_id,
    sandbox_id: row.sandbox_id,
    idempotency_key: row.idempotency_key,
    command: JSON.parse(row.command) as string[] | string,
    working_dir: row.working_dir,
    timeout: row.timeout_ms,
    outcome: row.outcome,
    exit_code: row.exit_code,
    signal: row.signal,
    system_error: row.system_error,
    record_pending: row.record_pending === 1,
    cancel_requested: row.cancel_requested === 1,
    stdout: row.stdout,
    stderr: row.stderr,
    stdout_bytes: row.stdout_bytes,
    stderr_bytes: row.stderr_bytes,
    stdout_truncated: row.stdout_truncated === 1,
    stderr_truncated: row.stderr_truncated === 1,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    duration_ms: row.duration_ms,
    last_event_id: row.last_event_id,
    recovery: row.recovery,
  };
}

export class BackendStore {
  private readonly db: Database;
  private readonly statements = new Map<string, Statement<unknown>>();
  private closed = false;

  constructor(file: string) {
    this.db = openDatabase(file);
    migrate(this.db, MIGRATIONS);
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

  /** A statement prepared once per SQL text, for the row access a feature keeps beside itself (jobs/store.ts). */
  statement<Row>(sql: string): Statement<Row> {
    return this.prepare<Row>(sql);
  }

  /** Prepared once per SQL text. */
  private prepare<Row>(sql: string): Statement<Row> {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<unknown>(sql);
      this.statements.set(sql, stmt);
    }
    return stmt as Statement<Row>;
  }

  // ── sandboxes ────────────────────────────────────────────────────────────

  insertSandbox(row: SandboxRow): void {
    this.prepare(
      `INSERT INTO sandboxes (${SANDBOX_COLUMNS.join(", ")}) VALUES (${SANDBOX_COLUMNS.map(() => "?").join(", ")})`,
    ).run(...SANDBOX_COLUMNS.map((c) => row[c]));
  }

  getSandboxById(id: string): SandboxRow | undefined {
    return this.prepare<SandboxRow>("SELECT * FROM sandboxes WHERE sandbox_id = ?").get(id);
  }

  getSandboxByName(name: string): SandboxRow | undefined {
    return this.prepare<SandboxRow>("SELECT * FROM sandboxes WHERE name = ?").get(name);
  }

  /** The uids sandboxes have, to give a new one another. */
  sandboxUids(): Set<number> {
    const rows = this.prepare<{ uid: number }>("SELECT uid FROM sandboxes WHERE uid IS NOT NULL").all();
    return new Set(rows.map((r) => r.uid));
  }

  setSandboxUid(sandboxId: string, uid: number): void {
    this.prepare("UPDATE sandboxes SET uid = ? WHERE sandbox_id = ?").run(uid, sandboxId);
  }

  listSandboxes(): SandboxRow[] {
    return this.prepare<SandboxRow>("SELECT * FROM sandboxes ORDER BY created_at, sandbox_id").all();
  }

  deleteSandbox(id: string): void {
    this.prepare("DELETE FROM sandboxes WHERE sandbox_id = ?").run(id);
  }

  // ── executions ───────────────────────────────────────────────────────────

  insertExecution(e: NewExecution): void {
    this.prepare(
      `INSERT INTO executions
           (execution_id, sandbox_id, idempotency_key, command, working_dir, timeout_ms, outcome, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)`,
    ).run(
      e.execution_id,
      e.sandbox_id,
      e.idempotency_key,
      JSON.stringify(e.command),
      e.working_dir,
      e.timeout_ms,
      e.created_at,
    );
  }

  markExecutionStarted(
    executionId: string,
    startedAt: string,
    group: { pgid: number | null; startTime: string | null; bootId: string | null },
  ): void {
    this.prepare(
      "UPDATE executions SET started_at = ?, pgid = ?, pgid_start_time = ?, boot_id = ? WHERE execution_id = ?",
    ).run(startedAt, group.pgid, group.startTime, group.bootId, executionId);
  }

  finishExecution(executionId: string, end: ExecutionEnd): void {
    this.prepare(
      `UPDATE executions SET
           outcome = ?, exit_code = ?, signal = ?, system_error = ?, record_pending = ?,
           stdout = ?, stderr = ?, stdout_bytes = ?, stderr_bytes = ?,
           stdout_truncated = ?, stderr_truncated = ?, finished_at = ?, duration_ms = ?
         WHERE execution_id = ?`,
    ).run(
      end.outcome,
      end.exit_code,
      end.signal,
      end.system_error,
      end.record_pending ? 1 : 0,
      end.stdout,
      end.stderr,
      end.stdout_bytes,
      end.stderr_bytes,
      end.stdout_truncated ? 1 : 0,
      end.stderr_truncated ? 1 : 0,
      end.finished_at,
      end.duration_ms,
      executionId,
    );
  }

  /** Marks an execution lost by an earlier run of the backend, with what recovery found of its process group. */
  markExecutionLost(executionId: string, recovery: string | null): void {
    this.prepare(
      `UPDATE executions SET outcome = 'unknown', system_error = 'exec_stream_lost', exit_code = NULL, signal = NULL,
           recovery = ?
         WHERE execution_id = ? AND outcome = 'pending'`,
    ).run(recovery, executionId);
  }

  publishExecution(executionId: string): void {
    this.prepare("UPDATE executions SET record_pending = 0 WHERE execution_id = ?").run(executionId);
  }

  getExecution(executionId: string): ExecutionRow | undefined {
    return this.prepare<ExecutionRow>("SELECT * FROM executions WHERE execution_id = ?").get(executionId);
  }

  listExecutions(q: ExecutionQuery): ExecutionRow[] {
    const where = ["sandbox_id = ?"];
    const params: unknown[] = [q.sandboxId];
    if (q.beforeSeq !== undefined) {
      where.push("seq < ?");
      params.push(q.beforeSeq);
    }
    if (q.outcome !== undefined) {
      where.push("outcome = ?");
      params.push(q.outcome);
    }
    if (q.idempotencyKey !== undefined) {
      where.push("idempotency_key = ?");
      params.push(q.idempotencyKey);
    }
    params.push(q.limit);
    const columns = q.withoutOutput ? EXECUTION_COLUMNS_WITHOUT_OUTPUT : "*";
    return this.prepare<ExecutionRow>(
      `SELECT ${columns} FROM executions WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`,
    ).all(...params);
  }

  countPending(sandboxId: string): number {
    const row = this.prepare<{ n: number }>(
      "SELECT COUNT(*) AS n FROM executions WHERE sandbox_id = ? AND outcome = 'pending'",
    ).get(sandboxId);
    return row?.n ?? 0;
  }

  pendingExecutions(): ExecutionRow[] {
    return this.prepare<ExecutionRow>("SELECT * FROM executions WHERE outcome = 'pending' ORDER BY seq").all();
  }

  unpublishedExecutions(): ExecutionRow[] {
    return this.prepare<ExecutionRow>("SELECT * FROM executions WHERE record_pending = 1 ORDER BY seq").all();
  }

  // ── retention ────────────────────────────────────────────────────────────

  /** Finished executions, oldest first (by when they ended), ended before `before` (ISO), at most `limit`. */
  finishedExecutions(q: { before: string; limit: number; outputKept?: boolean }): RetainedExecution[] {
    return this.prepare<RetainedExecution>(
      `SELECT execution_id, sandbox_id, COALESCE(finished_at, created_at) AS ended_at FROM executions
         WHERE outcome <> 'pending' AND COALESCE(finished_at, created_at) < ?${
           q.outputKept ? " AND output_dropped_at IS NULL" : ""
         }
         ORDER BY COALESCE(finished_at, created_at) LIMIT ?`,
    ).all(q.before, q.limit);
  }

  /** Deletes an execution's record, events and idempotency key (they cascade). */
  deleteExecution(executionId: string): void {
    this.prepare("DELETE FROM executions WHERE execution_id = ?").run(executionId);
  }

  markOutputDropped(executionId: string, at: string): void {
    this.prepare("UPDATE executions SET output_dropped_at = ? WHERE execution_id = ?").run(at, executionId);
  }

  /** Exited processes, oldest first (by when they ended), ended before `before` (ISO). */
  exitedProcesses(q: { before: string; limit: number }): ProcessRow[] {
    return this.prepare<ProcessRow>(
      `SELECT * FROM processes WHERE state = 'exited' AND COALESCE(ended_at, created_at) < ?
         ORDER BY COALESCE(ended_at, created_at) LIMIT ?`,
    ).all(q.before, q.limit);
  }

  /** What the database holds: bytes in use (free pages not counted), and what it keeps. */
  contents(): StoredContents {
    const pragma = (name: string) => Number(Object.values((this.db.pragma(name) as object[])[0] ?? {})[0] ?? 0);
    const used = (pragma("page_count") - pragma("freelist_count")) * pragma("page_size");
    const count = (sql: string) => this.prepare<{ n: number }>(sql).get()?.n ?? 0;
    const oldest = this.prepare<{ at: string | null }>(
      "SELECT MIN(COALESCE(finished_at, created_at)) AS at FROM executions WHERE outcome <> 'pending'",
    ).get();
    return {
      databaseBytes: used,
      executions: count("SELECT COUNT(*) AS n FROM executions"),
      executionsRunning: count("SELECT COUNT(*) AS n FROM executions WHERE outcome = 'pending'"),
      outputsDropped: count("SELECT COUNT(*) AS n FROM executions WHERE output_dropped_at IS NOT NULL"),
      processes: count("SELECT COUNT(*) AS n FROM processes"),
      processesRunning: count("SELECT COUNT(*) AS n FROM processes WHERE state <> 'exited'"),
      oldestFinishedAt: oldest?.at ?? null,
    };
  }

  /** Every execution whose output files are kept (for measuring them). */
  executionsWithOutput(): Array<{ execution_id: string; sandbox_id: string }> {
    return this.prepare<{ execution_id: string; sandbox_id: string }>(
      "SELECT execution_id, sandbox_id FROM executions WHERE output_dropped_at IS NULL",
    ).all();
  }

  markCancelRequested(executionId: string): void {
    this.prepare("UPDATE executions SET cancel_requested = 1 WHERE execution_id = ?").run(executionId);
  }

  // ── execution events ─────────────────────────────────────────────────────

  insertEvent(row: EventRow): void {
    this.prepare(
      `INSERT INTO execution_events (execution_id, sequence, type, at, data, stdout_end, stderr_end)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(row.execution_id, row.sequence, row.type, row.at, row.data, row.stdout_end, row.stderr_end);
  }

  setLastEventId(executionId: string, sequence: number): void {
    this.prepare("UPDATE executions SET last_event_id = ? WHERE execution_id = ?").run(sequence, executionId);
  }

  /** Events after a sequence, oldest first. */
  readEvents(executionId: string, afterSequence: number, limit: number): EventRow[] {
    return this.prepare<EventRow>(
      `SELECT * FROM execution_events WHERE execution_id = ? AND sequence > ? ORDER BY sequence LIMIT ?`,
    ).all(executionId, afterSequence, limit);
  }

  getEvent(executionId: string, sequence: number): EventRow | undefined {
    return this.prepare<EventRow>("SELECT * FROM execution_events WHERE execution_id = ? AND sequence = ?").get(
      executionId,
      sequence,
    );
  }

  lastEvent(executionId: string): EventRow | undefined {
    return this.prepare<EventRow>(
      "SELECT * FROM execution_events WHERE execution_id = ? ORDER BY sequence DESC LIMIT 1",
    ).get(executionId);
  }

  getEventBase(executionId: string): EventBaseRow | undefined {
    return this.prepare<EventBaseRow>("SELECT * FROM execution_event_bases WHERE execution_id = ?").get(executionId);
  }

  /** Keeps the newest `keep` events; what goes is remembered in the base row. */
  trimEvents(executionId: string, keep: number): void {
    const last = this.lastEvent(executionId);
    if (!last) return;
    const through = last.sequence - keep;
    const boundary = through > 0 ? this.getEvent(executionId, through) : undefined;
    if (!boundary) return;
    this.prepare(
      `INSERT INTO execution_event_bases (execution_id, through_sequence, stdout_end, stderr_end) VALUES (?, ?, ?, ?)
         ON CONFLICT (execution_id) DO UPDATE SET
           through_sequence = excluded.through_sequence, stdout_end = excluded.stdout_end, stderr_end = excluded.stderr_end`,
    ).run(executionId, through, boundary.stdout_end, boundary.stderr_end);
    this.prepare("DELETE FROM execution_events WHERE execution_id = ? AND sequence <= ?").run(executionId, through);
  }

  // ── idempotency keys ─────────────────────────────────────────────────────

  getIdempotencyKey(scope: IdempotencyScope): IdempotencyRow | undefined {
    return this.prepare<IdempotencyRow>(
      `SELECT body_sha256, status, response, execution_id, created_at_ms FROM idempotency_keys
         WHERE caller = ? AND method = ? AND path = ? AND key = ?`,
    ).get(scope.caller, scope.method, scope.path, scope.key);
  }

  putIdempotencyKey(scope: IdempotencyScope, row: IdempotencyRow): void {
    this.prepare(
      `INSERT INTO idempotency_keys (caller, method, path, key, body_sha256, status, response, execution_id, created_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      scope.caller,
      scope.method,
      scope.path,
      scope.key,
      row.body_sha256,
      row.status,
      row.response,
      row.execution_id,
      row.created_at_ms,
    );
  }

  purgeIdempotencyKeys(olderThanMs: number): number {
    return this.prepare("DELETE FROM idempotency_keys WHERE created_at_ms < ?").run(olderThanMs).changes;
  }

  // ── supervised processes ─────────────────────────────────────────────────

  insertProcess(row: Omit<ProcessRow, "seq">): void {
    const columns = Object.keys(row).filter((c) => PROCESS_WRITABLE.has(c));
    this.prepare(`INSERT INTO processes (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`).run(
      ...columns.map((c) => row[c as keyof typeof row]),
    );
  }

  /** Writes the given columns of a process row. */
  updateProcess(processId: string, patch: ProcessPatch): void {
    const columns = Object.keys(patch).filter((c) => PROCESS_WRITABLE.has(c));
    if (columns.length === 0) return;
    this.prepare(`UPDATE processes SET ${columns.map((c) => `${c} = ?`).join(", ")} WHERE process_id = ?`).run(
      ...columns.map((c) => patch[c as keyof ProcessPatch]),
      processId,
    );
  }

  getProcess(processId: string): ProcessRow | undefined {
    return this.prepare<ProcessRow>("SELECT * FROM processes WHERE process_id = ?").get(processId);
  }

  /** Oldest first. */
  listProcesses(sandboxId: string, idempotencyKey?: string): ProcessRow[] {
    if (idempotencyKey !== undefined) {
      return this.prepare<ProcessRow>(
        "SELECT * FROM processes WHERE sandbox_id = ? AND idempotency_key = ? ORDER BY seq",
      ).all(sandboxId, idempotencyKey);
    }
    return this.prepare<ProcessRow>("SELECT * FROM processes WHERE sandbox_id = ? ORDER BY seq").all(sandboxId);
  }

  /** Processes not ended for good (running, backoff, stopping), in every sandbox. */
  unendedProcesses(): ProcessRow[] {
    return this.prepare<ProcessRow>("SELECT * FROM processes WHERE state <> 'exited' ORDER BY seq").all();
  }

  /** Processes the daemon stopped on its way down (restart recovery starts `always` ones again). */
  processesEndedByShutdown(): ProcessRow[] {
    return this.prepare<ProcessRow>(
      "SELECT * FROM processes WHERE state = 'exited' AND end_reason = 'backend_shutdown' AND stop_requested = 0 ORDER BY seq",
    ).all();
  }

  countUnendedProcesses(sandboxId: string): number {
    const row = this.prepare<{ n: number }>(
      "SELECT COUNT(*) AS n FROM processes WHERE sandbox_id = ? AND state <> 'exited'",
    ).get(sandboxId);
    return row?.n ?? 0;
  }

  deleteProcess(processId: string): void {
    this.prepare("DELETE FROM processes WHERE process_id = ?").run(processId);
  }
}

export interface ProcessRow {
  seq: number;
  process_id: string;
  sandbox_id: string;
  idempotency_key: string | null;
  name: string | null;
  /** JSON: string[] | string */
  command: string;
  working_dir: string;
  /** JSON: Record<string, string> (the request's env only) */
  env: string;
  stdin_enabled: number;
  timeout_ms: number | null;
  /** JSON: RestartPolicy */
  restart: string;
  state: ProcessState;
  outcome: Outcome;
  exit_code: number | null;
  signal: string | null;
  end_reason: ProcessEndReason | null;
  restarts: number;
  restarts_in_window: number;
  stop_requested: number;
  /** The current run's leader, which is also its process group id. */
  os_pid: number | null;
  pgid_start_time: string | null;
  /** The boot the current run's group was started in. */
  boot_id: string | null;
  /** What restart recovery found of the last run's process group, or null. */
  recovery: string | null;
  /** JSON: ProcessRunSummary | null */
  last_run: string | null;
  next_restart_at: string | null;
  /** Each stream's logical end when last recorded (the log files may be further on). */
  stdout_bytes: number;
  stderr_bytes: number;
  created_at: string;
  first_started_at: string | null;
  started_at: string | null;
  ended_at: string | null;
}

export type ProcessPatch = Partial<Omit<ProcessRow, "seq" | "process_id" | "sandbox_id" | "created_at">>;

export const PROCESS_COLUMNS = columnsOf<ProcessRow>({
  seq: true,
  process_id: true,
  sandbox_id: true,
  idempotency_key: true,
  name: true,
  command: true,
  working_dir: true,
  env: true,
  stdin_enabled: true,
  timeout_ms: true,
  restart: true,
  state: true,
  outcome: true,
  exit_code: true,
  signal: true,
  end_reason: true,
  restarts: true,
  restarts_in_window: true,
  stop_requested: true,
  os_pid: true,
  pgid_start_time: true,
  boot_id: true,
  recovery: true,
  last_run: true,
  next_restart_at: true,
  stdout_bytes: true,
  stderr_bytes: true,
  created_at: true,
  first_started_at: true,
  started_at: true,
  ended_at: true,
});

/** What an insert or an update of a process row may write (`seq` is the table's own). */
const PROCESS_WRITABLE: ReadonlySet<string> = new Set(PROCESS_COLUMNS.filter((c) => c !== "seq"));
