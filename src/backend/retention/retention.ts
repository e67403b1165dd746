// What the embedded backend keeps, and for how long (docs/protocol.md, "Retention").
// Finished executions (record, event log, output files) and exited processes (record,
// logs) go once they are older than the retention period, which is never shorter than
// the idempotency-key retention: a record some local receipt may still be in doubt
// about can be read, by id or by key, for as long as its key is kept. Past the size
// limit, the oldest finished executions' output files go first (their records and
// event logs stay: outcome, exit code, tails), then records past the key window.
// Nothing that still runs is ever touched.

import fs from "node:fs";
import path from "node:path";
import type { StorageReport } from "../../protocol/types.js";
import type { BackendStore } from "../store/index.js";
import type { EventLog, ExecutionStore } from "../executions/index.js";
import type { ProcessSupervisor } from "../processes/index.js";
import type { SandboxRegistry } from "../sandboxes/index.js";
import { cutoffs, DAY_MS, horizonMs, outputsToDrop, overLimit, type RetentionSettings, sweepLog } from "./rules.js";

export const DEFAULT_RETAIN_MS = 30 * DAY_MS;
export const DEFAULT_RETAIN_BYTES = 5 * 1024 * 1024 * 1024;
/** Between sweeps (one also runs at start-up, after recovery). */
export const RETENTION_SWEEP_MS = 10 * 60 * 1000;
const BATCH = 100;

export interface RetentionOptions extends RetentionSettings {
  store: BackendStore;
  /** The executions' rows (finished ones, their output files). */
  executionRows: ExecutionStore;
  events: EventLog;
  sandboxes: SandboxRegistry;
  processes: ProcessSupervisor;
  now?: () => number;
  log?: (line: string) => void;
}

interface Usage {
  database: number;
  executionOutput: number;
  processLogs: number;
  total: number;
}

/** Bytes of the regular files under a directory (0 when it is gone). */
function bytesUnder(dir: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += bytesUnder(p);
    else if (e.isFile()) {
      try {
        total += fs.statSync(p).size;
      } catch {
        // gone meanwhile
      }
    }
  }
  return total;
}

/** Removes what `next` finds, a batch at a time, until nothing is left or `max` went; returns how many. */
function inBatches<T>(max: number, next: (limit: number) => T[], remove: (row: T) => void): number {
  let n = 0;
  while (n < max) {
    const rows = next(Math.min(BATCH, max - n));
    if (rows.length === 0) break;
    for (const row of rows) {
      remove(row);
      n++;
    }
  }
  return n;
}

export class Retention {
  private readonly executions: ExecutionStore;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private timer: NodeJS.Timeout | undefined;
  private lastSweep: StorageReport["last_sweep"] = null;

  constructor(private readonly opts: RetentionOptions) {
    this.executions = opts.executionRows;
    this.now = opts.now ?? Date.now;
    this.log = opts.log ?? (() => {});
  }

  /** Finished records older than this go: the retention period, never shorter than the key window. */
  get horizonMs(): number {
    return horizonMs(this.opts);
  }

  /** Sweeps now and every RETENTION_SWEEP_MS until stopped. */
  start(intervalMs = RETENTION_SWEEP_MS): void {
    this.sweepLogged();
    this.timer = setInterval(() => this.sweepLogged(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private sweepLogged(): void {
    if (this.opts.store.isClosed) return;
    try {
      this.sweep();
    } catch (err) {
      this.log(`retention: the sweep failed: ${(err as Error).message}`);
    }
  }

  /** One pass: by age, then by size. Returns what it did (also kept for the report). */
  sweep(): NonNullable<StorageReport["last_sweep"]> {
    const now = this.now();
    const result = { deleted_executions: 0, dropped_outputs: 0, deleted_processes: 0 };
    const { aged, keyWindow } = cutoffs(now, this.opts);
    // By age: everything finished before the horizon.
    result.deleted_executions += this.deleteExecutions(aged, Number.POSITIVE_INFINITY);
    result.deleted_processes += this.deleteProcesses(aged, Number.POSITIVE_INFINITY);
    // By size: the oldest finished outputs first, then records past the key window.
    let over = overLimit(this.usage().total, this.opts);
    if (over > 0) {
      result.dropped_outputs += this.dropOutputs(new Date(now).toISOString(), over);
      over = overLimit(this.usage().total, this.opts);
    }
    while (over > 0) {
      const executions = this.deleteExecutions(keyWindow, BATCH);
      const processes = executions === 0 ? this.deleteProcesses(keyWindow, BATCH) : 0;
      result.deleted_executions += executions;
      result.deleted_processes += processes;
      if (executions + processes === 0) break;
      over = overLimit(this.usage().total, this.opts);
    }
    for (const line of sweepLog(result, over, this.opts)) this.log(line);
    const sweep = { at: new Date(now).toISOString(), ...result, over_limit_bytes: over };
    this.lastSweep = sweep;
    return sweep;
  }

  /** Deletes finished executions that ended before `before`, oldest first, at most `max`. */
  private deleteExecutions(before: string, max: number): number {
    return inBatches(
      max,
      (limit) => this.executions.finishedExecutions({ before, limit }),
      (row) => {
        this.executions.transaction(() => this.executions.deleteExecution(row.execution_id));
        fs.rmSync(this.opts.events.outputDir(row.sandbox_id, row.execution_id), { recursive: true, force: true });
      },
    );
  }

  /** Deletes exited processes (record and logs) that ended before `before`, oldest first. */
  private deleteProcesses(before: string, max: number): number {
    return inBatches(
      max,
      (limit) => this.opts.processes.exitedBefore(before, limit),
      (row) => this.opts.processes.remove(row),
    );
  }

  /** Drops the output files of the oldest finished executions until `excess` bytes are freed. */
  private dropOutputs(before: string, excess: number): number {
    let freed = 0;
    let n = 0;
    for (;;) {
      const rows = this.executions.finishedExecutions({ before, limit: BATCH, outputKept: true });
      const sized = rows.map((row) => {
        const dir = this.opts.events.outputDir(row.sandbox_id, row.execution_id);
        return { row, dir, bytes: bytesUnder(dir) };
      });
      const drop = outputsToDrop(sized, excess - freed);
      for (const { row, dir, bytes } of drop) {
        fs.rmSync(dir, { recursive: true, force: true });
        this.executions.transaction(() =>
          this.executions.markOutputDropped(row.execution_id, new Date(this.now()).toISOString()),
        );
        freed += bytes;
        n++;
      }
      if (drop.length < sized.length || rows.length === 0) return n;
    }
  }

  private usage(): Usage {
    const { store, events, sandboxes } = this.opts;
    const database = store.usedBytes();
    let executionOutput = 0;
    for (const e of this.executions.executionsWithOutput())
      executionOutput += bytesUnder(events.outputDir(e.sandbox_id, e.execution_id));
    let processLogs = 0;
    for (const sandbox of sandboxes.rows()) {
      processLogs += bytesUnder(path.join(sandboxes.sandboxDir(sandbox.sandbox_id), "processes"));
    }
    return { database, executionOutput, processLogs, total: database + executionOutput + processLogs };
  }

  report(): StorageReport {
    const e = this.executions.counts();
    const p = this.opts.processes.counts();
    const u = this.usage();
    return {
      executions: {
        kept: e.executions,
        running: e.running,
        outputs_dropped: e.outputsDropped,
        oldest_finished_at: e.oldestFinishedAt,
      },
      processes: { kept: p.processes, running: p.running },
      bytes: { database: u.database, execution_output: u.executionOutput, process_logs: u.processLogs, total: u.total },
      retention: {
        retain_ms: this.horizonMs,
        retain_bytes: this.opts.retainBytes,
        key_retention_ms: this.opts.keyRetentionMs,
      },
      last_sweep: this.lastSweep,
    };
  }
}
