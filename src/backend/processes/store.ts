// Row access for supervised processes in backend.db (table processes; the schema is
// store/migrations.ts). Each method is one statement; callers group writes that must
// land together in BackendStore.transaction.

import type { Outcome, ProcessEndReason, ProcessState } from "../../protocol/types.js";
import { columnsOf, TableAccess } from "../store/index.js";

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
  /** The backend boot the current (or last) run was started in (null: none yet, or from before boots were recorded). */
  daemon_boot: string | null;
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
  /** JSON {cols, rows}: each run on a terminal of its own this size; null: pipes. */
  tty: string | null;
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
  daemon_boot: true,
  recovery: true,
  last_run: true,
  next_restart_at: true,
  stdout_bytes: true,
  stderr_bytes: true,
  created_at: true,
  first_started_at: true,
  started_at: true,
  ended_at: true,
  tty: true,
});

/** What an insert or an update of a process row may write (`seq` is the table's own). */
const PROCESS_WRITABLE: ReadonlySet<string> = new Set(PROCESS_COLUMNS.filter((c) => c !== "seq"));

export class ProcessStore extends TableAccess {
  insertProcess(row: Omit<ProcessRow, "seq">): void {
    const columns = Object.keys(row).filter((c) => PROCESS_WRITABLE.has(c));
    this.db
      .statement(`INSERT INTO processes (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`)
      .run(...columns.map((c) => row[c as keyof typeof row]));
  }

  /** Writes the given columns of a process row. */
  updateProcess(processId: string, patch: ProcessPatch): void {
    const columns = Object.keys(patch).filter((c) => PROCESS_WRITABLE.has(c));
    if (columns.length === 0) return;
    this.db
      .statement(`UPDATE processes SET ${columns.map((c) => `${c} = ?`).join(", ")} WHERE process_id = ?`)
      .run(...columns.map((c) => patch[c as keyof ProcessPatch]), processId);
  }

  getProcess(processId: string): ProcessRow | undefined {
    return this.db.statement<ProcessRow>("SELECT * FROM processes WHERE process_id = ?").get(processId);
  }

  /** Oldest first. */
  listProcesses(sandboxId: string, idempotencyKey?: string): ProcessRow[] {
    if (idempotencyKey !== undefined) {
      return this.db
        .statement<ProcessRow>("SELECT * FROM processes WHERE sandbox_id = ? AND idempotency_key = ? ORDER BY seq")
        .all(sandboxId, idempotencyKey);
    }
    return this.db.statement<ProcessRow>("SELECT * FROM processes WHERE sandbox_id = ? ORDER BY seq").all(sandboxId);
  }

  /** Processes not ended for good (running, backoff, stopping), in every sandbox. */
  unendedProcesses(): ProcessRow[] {
    return this.db.statement<ProcessRow>("SELECT * FROM processes WHERE state <> 'exited' ORDER BY seq").all();
  }

  /** Processes the daemon stopped on its way down (restart recovery starts `always` ones again). */
  processesEndedByShutdown(): ProcessRow[] {
    return this.db
      .statement<ProcessRow>(
        "SELECT * FROM processes WHERE state = 'exited' AND end_reason = 'backend_shutdown' AND stop_requested = 0 ORDER BY seq",
      )
      .all();
  }

  /** The process of a sandbox named `name` that has not exited (a name is one process's until it exits), if any. */
  unendedProcessNamed(sandboxId: string, name: string): ProcessRow | undefined {
    return this.db
      .statement<ProcessRow>(
        "SELECT * FROM processes WHERE sandbox_id = ? AND name = ? AND state <> 'exited' ORDER BY seq LIMIT 1",
      )
      .get(sandboxId, name);
  }

  countUnendedProcesses(sandboxId: string): number {
    const row = this.db
      .statement<{ n: number }>("SELECT COUNT(*) AS n FROM processes WHERE sandbox_id = ? AND state <> 'exited'")
      .get(sandboxId);
    return row?.n ?? 0;
  }

  deleteProcess(processId: string): void {
    this.db.statement("DELETE FROM processes WHERE process_id = ?").run(processId);
  }
  /** Exited processes, oldest first (by when they ended), ended before `before` (ISO). */
  exitedProcesses(q: { before: string; limit: number }): ProcessRow[] {
    return this.db
      .statement<ProcessRow>(
        `SELECT * FROM processes WHERE state = 'exited' AND COALESCE(ended_at, created_at) < ?
         ORDER BY COALESCE(ended_at, created_at) LIMIT ?`,
      )
      .all(q.before, q.limit);
  }

  /** How many processes are kept, and how many have not ended for good. */
  counts(): { processes: number; running: number } {
    const count = (sql: string) => this.db.statement<{ n: number }>(sql).get()?.n ?? 0;
    return {
      processes: count("SELECT COUNT(*) AS n FROM processes"),
      running: count("SELECT COUNT(*) AS n FROM processes WHERE state <> 'exited'"),
    };
  }
}
