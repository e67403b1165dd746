// Row access for executions in backend.db (tables executions, execution_events,
// execution_event_bases; the schema is store/migrations.ts). Each method is one
// statement; callers group writes that must land together in BackendStore.transaction.

import type { CommandUsage, EgressDenied, EndReason, ExecutionRecord, Outcome } from "../../protocol/types.js";
import { columnsOf, TableAccess } from "../store/index.js";
import { prefixRange } from "../../common/ids.js";

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
  /** Why it ended beyond its exit (out_of_memory), or null. */
  end_reason: EndReason | null;
  /** JSON: what it used (CommandUsage), once it ended; null before, or for a row from before usage was measured. */
  usage?: string | null;
  /** JSON: the connections its sandbox's egress proxy refused while it ran (EgressDenied); null: none. */
  egress_denied?: string | null;
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
  /** The backend boot it was admitted and ran in (null: kept from before boots were recorded). */
  daemon_boot: string | null;
  /** 1: run on a terminal (its stdout is the terminal's transcript). */
  tty: number;
  /** The manifest digest of the image its sandbox's root was made from; null: the host's. */
  image_digest: string | null;
}

/** A finished execution as retention sees it. */
export interface RetainedExecution {
  execution_id: string;
  sandbox_id: string;
  ended_at: string;
}

export interface NewExecution {
  execution_id: string;
  sandbox_id: string;
  idempotency_key: string | null;
  command: string[] | string;
  working_dir: string;
  timeout_ms: number;
  created_at: string;
  daemon_boot: string;
  tty?: boolean;
  /** The image its sandbox's root was made from (its manifest digest); absent or null: the host's. */
  image_digest?: string | null;
}

export interface ExecutionEnd {
  outcome: Outcome;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  end_reason: EndReason | null;
  usage: CommandUsage | null;
  /** Connections refused while it ran (egress-denials.ts); absent or null: none. */
  egress_denied?: EgressDenied | null;
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

export interface ExecutionQuery {
  sandboxId: string;
  limit: number;
  /** Only rows older than this sequence (the cursor). */
  beforeSeq?: number;
  outcome?: Outcome;
  idempotencyKey?: string;
  /** Only executions whose id starts with this (a range on the id's index). */
  idPrefix?: string;
  /** Leave the kept output out (stdout and stderr read as ""); byte counts and truncated flags stay. */
  withoutOutput?: boolean;
}

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
  end_reason: true,
  usage: true,
  egress_denied: true,
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
  daemon_boot: true,
  tty: true,
  image_digest: true,
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
    end_reason: row.end_reason ?? null,
    image_digest: row.image_digest ?? null,
    usage: row.usage == null ? null : (JSON.parse(row.usage) as CommandUsage),
    ...(row.egress_denied != null && { egress_denied: JSON.parse(row.egress_denied) as EgressDenied }),
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
    boot: row.daemon_boot,
    ...(row.tty === 1 && { tty: true }),
  };
}

export class ExecutionStore extends TableAccess {
  insertExecution(e: NewExecution): void {
    this.db
      .statement(
        `INSERT INTO executions
           (execution_id, sandbox_id, idempotency_key, command, working_dir, timeout_ms, outcome, created_at,
            daemon_boot, tty, image_digest)
         VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
      )
      .run(
        e.execution_id,
        e.sandbox_id,
        e.idempotency_key,
        JSON.stringify(e.command),
        e.working_dir,
        e.timeout_ms,
        e.created_at,
        e.daemon_boot,
        e.tty ? 1 : 0,
        e.image_digest ?? null,
      );
  }

  markExecutionStarted(
    executionId: string,
    startedAt: string,
    group: { pgid: number | null; startTime: string | null; bootId: string | null },
  ): void {
    this.db
      .statement(
        "UPDATE executions SET started_at = ?, pgid = ?, pgid_start_time = ?, boot_id = ? WHERE execution_id = ?",
      )
      .run(startedAt, group.pgid, group.startTime, group.bootId, executionId);
  }

  finishExecution(executionId: string, end: ExecutionEnd): void {
    this.db
      .statement(
        `UPDATE executions SET
           outcome = ?, exit_code = ?, signal = ?, system_error = ?, end_reason = ?, usage = ?, egress_denied = ?,
           record_pending = ?,
           stdout = ?, stderr = ?, stdout_bytes = ?, stderr_bytes = ?,
           stdout_truncated = ?, stderr_truncated = ?, finished_at = ?, duration_ms = ?
         WHERE execution_id = ?`,
      )
      .run(
        end.outcome,
        end.exit_code,
        end.signal,
        end.system_error,
        end.end_reason,
        end.usage === null ? null : JSON.stringify(end.usage),
        end.egress_denied == null ? null : JSON.stringify(end.egress_denied),
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

  /** What restart recovery says of an execution it followed again (docs/drivers.md, "A daemon restart"). */
  noteRecovery(executionId: string, recovery: string): void {
    this.db.statement("UPDATE executions SET recovery = ? WHERE execution_id = ?").run(recovery, executionId);
  }

  /** Marks an execution lost by an earlier run of the backend, with what recovery found of its process group. */
  markExecutionLost(executionId: string, recovery: string | null): void {
    this.db
      .statement(
        `UPDATE executions SET outcome = 'unknown', system_error = 'exec_stream_lost', exit_code = NULL, signal = NULL,
           recovery = ?
         WHERE execution_id = ? AND outcome = 'pending'`,
      )
      .run(recovery, executionId);
  }

  publishExecution(executionId: string): void {
    this.db.statement("UPDATE executions SET record_pending = 0 WHERE execution_id = ?").run(executionId);
  }

  getExecution(executionId: string): ExecutionRow | undefined {
    return this.db.statement<ExecutionRow>("SELECT * FROM executions WHERE execution_id = ?").get(executionId);
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
    if (q.idPrefix !== undefined) {
      const { lo, hi } = prefixRange(q.idPrefix);
      where.push("execution_id >= ? AND execution_id < ?");
      params.push(lo, hi);
    }
    params.push(q.limit);
    const columns = q.withoutOutput ? EXECUTION_COLUMNS_WITHOUT_OUTPUT : "*";
    return this.db
      .statement<ExecutionRow>(
        `SELECT ${columns} FROM executions WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`,
      )
      .all(...params);
  }

  countPending(sandboxId: string): number {
    const row = this.db
      .statement<{ n: number }>("SELECT COUNT(*) AS n FROM executions WHERE sandbox_id = ? AND outcome = 'pending'")
      .get(sandboxId);
    return row?.n ?? 0;
  }

  pendingExecutions(): ExecutionRow[] {
    return this.db.statement<ExecutionRow>("SELECT * FROM executions WHERE outcome = 'pending' ORDER BY seq").all();
  }

  unpublishedExecutions(): ExecutionRow[] {
    return this.db.statement<ExecutionRow>("SELECT * FROM executions WHERE record_pending = 1 ORDER BY seq").all();
  }

  // ── retention ────────────────────────────────────────────────────────────

  /** Finished executions, oldest first (by when they ended), ended before `before` (ISO), at most `limit`. */
  finishedExecutions(q: { before: string; limit: number; outputKept?: boolean }): RetainedExecution[] {
    return this.db
      .statement<RetainedExecution>(
        `SELECT execution_id, sandbox_id, COALESCE(finished_at, created_at) AS ended_at FROM executions
         WHERE outcome <> 'pending' AND COALESCE(finished_at, created_at) < ?${
           q.outputKept ? " AND output_dropped_at IS NULL" : ""
         }
         ORDER BY COALESCE(finished_at, created_at) LIMIT ?`,
      )
      .all(q.before, q.limit);
  }

  /** Deletes an execution's record, events and idempotency key (they cascade). */
  deleteExecution(executionId: string): void {
    this.db.statement("DELETE FROM executions WHERE execution_id = ?").run(executionId);
  }

  markOutputDropped(executionId: string, at: string): void {
    this.db.statement("UPDATE executions SET output_dropped_at = ? WHERE execution_id = ?").run(at, executionId);
  }

  /** Every execution whose output files are kept (for measuring them). */
  executionsWithOutput(): Array<{ execution_id: string; sandbox_id: string }> {
    return this.db
      .statement<{ execution_id: string; sandbox_id: string }>(
        "SELECT execution_id, sandbox_id FROM executions WHERE output_dropped_at IS NULL",
      )
      .all();
  }

  markCancelRequested(executionId: string): void {
    this.db.statement("UPDATE executions SET cancel_requested = 1 WHERE execution_id = ?").run(executionId);
  }

  /** How many executions are kept, how many run, how many lost their output files, and the oldest end. */
  counts(): { executions: number; running: number; outputsDropped: number; oldestFinishedAt: string | null } {
    const count = (sql: string) => this.db.statement<{ n: number }>(sql).get()?.n ?? 0;
    const oldest = this.db
      .statement<{ at: string | null }>(
        "SELECT MIN(COALESCE(finished_at, created_at)) AS at FROM executions WHERE outcome <> 'pending'",
      )
      .get();
    return {
      executions: count("SELECT COUNT(*) AS n FROM executions"),
      running: count("SELECT COUNT(*) AS n FROM executions WHERE outcome = 'pending'"),
      outputsDropped: count("SELECT COUNT(*) AS n FROM executions WHERE output_dropped_at IS NOT NULL"),
      oldestFinishedAt: oldest?.at ?? null,
    };
  }

  insertEvent(row: EventRow): void {
    this.db
      .statement(
        `INSERT INTO execution_events (execution_id, sequence, type, at, data, stdout_end, stderr_end)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(row.execution_id, row.sequence, row.type, row.at, row.data, row.stdout_end, row.stderr_end);
  }

  setLastEventId(executionId: string, sequence: number): void {
    this.db.statement("UPDATE executions SET last_event_id = ? WHERE execution_id = ?").run(sequence, executionId);
  }

  /** Events after a sequence, oldest first. */
  readEvents(executionId: string, afterSequence: number, limit: number): EventRow[] {
    return this.db
      .statement<EventRow>(
        `SELECT * FROM execution_events WHERE execution_id = ? AND sequence > ? ORDER BY sequence LIMIT ?`,
      )
      .all(executionId, afterSequence, limit);
  }

  getEvent(executionId: string, sequence: number): EventRow | undefined {
    return this.db
      .statement<EventRow>("SELECT * FROM execution_events WHERE execution_id = ? AND sequence = ?")
      .get(executionId, sequence);
  }

  lastEvent(executionId: string): EventRow | undefined {
    return this.db
      .statement<EventRow>("SELECT * FROM execution_events WHERE execution_id = ? ORDER BY sequence DESC LIMIT 1")
      .get(executionId);
  }

  getEventBase(executionId: string): EventBaseRow | undefined {
    return this.db
      .statement<EventBaseRow>("SELECT * FROM execution_event_bases WHERE execution_id = ?")
      .get(executionId);
  }

  /** Keeps the newest `keep` events; what goes is remembered in the base row. */
  trimEvents(executionId: string, keep: number): void {
    const last = this.lastEvent(executionId);
    if (!last) return;
    const through = last.sequence - keep;
    const boundary = through > 0 ? this.getEvent(executionId, through) : undefined;
    if (!boundary) return;
    this.db
      .statement(
        `INSERT INTO execution_event_bases (execution_id, through_sequence, stdout_end, stderr_end) VALUES (?, ?, ?, ?)
         ON CONFLICT (execution_id) DO UPDATE SET
           through_sequence = excluded.through_sequence, stdout_end = excluded.stdout_end, stderr_end = excluded.stderr_end`,
      )
      .run(executionId, through, boundary.stdout_end, boundary.stderr_end);
    this.db
      .statement("DELETE FROM execution_events WHERE execution_id = ? AND sequence <= ?")
      .run(executionId, through);
  }
}
