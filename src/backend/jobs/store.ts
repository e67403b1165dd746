// Row access for jobs in backend.db (tables job_requests, jobs, job_output; see the
// migration in store/db.ts). Each method is one statement; callers group writes that must
// land together in BackendStore.transaction.

import type { DependencyPolicy, JobStatus, JobStream, JobSummary } from "../../protocol/jobs.js";
import type { CommandUsage, EndReason } from "../../protocol/types.js";
import { columnsOf, TableAccess } from "../store/index.js";
import { prefixRange } from "../../common/ids.js";

export interface JobRequestRow {
  sandbox_id: string;
  request_id: string;
  digest: string;
  created_at: string;
}

export interface JobRow {
  seq: number;
  job_id: string;
  sandbox_id: string;
  request_id: string;
  job_index: number;
  name: string;
  /** Of the job's normalized inputs: the same digest is the same job. */
  digest: string;
  /** JSON: string[] | string */
  command: string;
  working_dir: string;
  /** JSON: Record<string, string> (the request's env only) */
  env: string;
  stdin: Uint8Array | null;
  timeout_ms: number;
  /** JSON: names, as submitted */
  depends_on: string;
  /** JSON: the job ids those names resolved to */
  dependency_ids: string;
  dependency_policy: DependencyPolicy;
  queue_key: string | null;
  status: JobStatus;
  exit_code: number | null;
  signal: string | null;
  error: string | null;
  /** JSON: string[] */
  leftover_processes: string;
  cancel_requested: number;
  /** How the backend ended the run ("timed_out", "cancelled", "shutdown"), once it did. */
  end_intent: string | null;
  /** Why the command ended beyond its exit (out_of_memory), or null. */
  end_reason: EndReason | null;
  /** JSON: what the command used (CommandUsage), once it ended; null before, or for a job stored before usage was measured. */
  usage: string | null;
  pgid: number | null;
  pgid_start_time: string | null;
  /** The boot the group was started in (recovery never signals a group of another boot). */
  boot_id: string | null;
  /** Set when the main process's exit status was recorded (the run may still be wrapping up). */
  main_exited_at: string | null;
  output_bytes: number;
  output_omitted_bytes: number;
  output_last_seq: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export type NewJobRow = Omit<
  JobRow,
  | "seq"
  | "exit_code"
  | "signal"
  | "error"
  | "leftover_processes"
  | "cancel_requested"
  | "end_intent"
  | "end_reason"
  | "usage"
  | "pgid"
  | "pgid_start_time"
  | "boot_id"
  | "main_exited_at"
  | "output_bytes"
  | "output_omitted_bytes"
  | "output_last_seq"
  | "started_at"
  | "finished_at"
>;

type FixedJobColumn = "seq" | "job_id" | "sandbox_id" | "request_id" | "created_at";
export type JobPatch = Partial<Omit<JobRow, FixedJobColumn>>;

export interface JobOutputRow {
  seq: number;
  stream: JobStream;
  byte_offset: number;
  head: number;
  data: Uint8Array;
}

const UNFINISHED = "('queued', 'waiting', 'running', 'cancel_requested')";

export const JOB_REQUEST_COLUMNS = columnsOf<JobRequestRow>({
  sandbox_id: true,
  request_id: true,
  digest: true,
  created_at: true,
});

export const JOB_COLUMNS = columnsOf<JobRow>({
  seq: true,
  job_id: true,
  sandbox_id: true,
  request_id: true,
  job_index: true,
  name: true,
  digest: true,
  command: true,
  working_dir: true,
  env: true,
  stdin: true,
  timeout_ms: true,
  depends_on: true,
  dependency_ids: true,
  dependency_policy: true,
  queue_key: true,
  status: true,
  exit_code: true,
  signal: true,
  error: true,
  leftover_processes: true,
  cancel_requested: true,
  end_intent: true,
  end_reason: true,
  usage: true,
  pgid: true,
  pgid_start_time: true,
  boot_id: true,
  main_exited_at: true,
  output_bytes: true,
  output_omitted_bytes: true,
  output_last_seq: true,
  created_at: true,
  started_at: true,
  finished_at: true,
});

/** Which of a sandbox's jobs a list asks for. */
export interface JobFilter {
  requestId?: string;
  status?: JobStatus;
  /** Only jobs whose id starts with this (a range on the id's index). */
  idPrefix?: string;
}

/** A job's identity and placement, never changed once admitted (JobPatch leaves them out). */
const FIXED_JOB_COLUMNS: readonly FixedJobColumn[] = ["seq", "job_id", "sandbox_id", "request_id", "created_at"];

const PATCHABLE: ReadonlySet<string> = new Set(
  JOB_COLUMNS.filter((c) => !(FIXED_JOB_COLUMNS as readonly string[]).includes(c)),
);

export function toJobSummary(row: JobRow): JobSummary {
  return {
    job_id: row.job_id,
    request_id: row.request_id,
    sandbox_id: row.sandbox_id,
    name: row.name,
    status: row.status,
    command: JSON.parse(row.command) as string[] | string,
    working_dir: row.working_dir,
    timeout_ms: row.timeout_ms,
    depends_on: JSON.parse(row.depends_on) as string[],
    dependency_policy: row.dependency_policy,
    queue_key: row.queue_key,
    exit_code: row.exit_code,
    signal: row.signal,
    error: row.error,
    end_reason: row.end_reason ?? null,
    usage: row.usage == null ? null : (JSON.parse(row.usage) as CommandUsage),
    leftover_processes: JSON.parse(row.leftover_processes) as string[],
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    output_bytes: row.output_bytes,
    output_omitted_bytes: row.output_omitted_bytes,
  };
}

export class JobStore extends TableAccess {
  getRequest(sandboxId: string, requestId: string): JobRequestRow | undefined {
    return this.db
      .statement<JobRequestRow>("SELECT * FROM job_requests WHERE sandbox_id = ? AND request_id = ?")
      .get(sandboxId, requestId);
  }

  insertRequest(row: JobRequestRow): void {
    this.db
      .statement(
        `INSERT INTO job_requests (${JOB_REQUEST_COLUMNS.join(", ")}) VALUES (${JOB_REQUEST_COLUMNS.map(() => "?").join(", ")})`,
      )
      .run(...JOB_REQUEST_COLUMNS.map((c) => row[c]));
  }

  insertJob(row: NewJobRow): void {
    const columns = Object.keys(row);
    this.db
      .statement(`INSERT INTO jobs (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`)
      .run(...columns.map((c) => row[c as keyof NewJobRow]));
  }

  updateJob(jobId: string, patch: JobPatch): void {
    const columns = Object.keys(patch).filter((c) => PATCHABLE.has(c));
    if (columns.length === 0) return;
    this.db
      .statement(`UPDATE jobs SET ${columns.map((c) => `${c} = ?`).join(", ")} WHERE job_id = ?`)
      .run(...columns.map((c) => patch[c as keyof JobPatch]), jobId);
  }

  getJob(jobId: string): JobRow | undefined {
    return this.db.statement<JobRow>("SELECT * FROM jobs WHERE job_id = ?").get(jobId);
  }

  /** A request's jobs in the order they were submitted. */
  jobsOfRequest(sandboxId: string, requestId: string): JobRow[] {
    return this.db
      .statement<JobRow>("SELECT * FROM jobs WHERE sandbox_id = ? AND request_id = ? ORDER BY job_index")
      .all(sandboxId, requestId);
  }

  /** A sandbox's jobs in acceptance order, optionally of one request, a status and/or an id prefix. */
  listJobs(sandboxId: string, filter: JobFilter = {}): JobRow[] {
    const where = ["sandbox_id = ?"];
    const params: unknown[] = [sandboxId];
    if (filter.requestId !== undefined) {
      where.push("request_id = ?");
      params.push(filter.requestId);
    }
    if (filter.status !== undefined) {
      where.push("status = ?");
      params.push(filter.status);
    }
    if (filter.idPrefix !== undefined) {
      const { lo, hi } = prefixRange(filter.idPrefix);
      where.push("job_id >= ? AND job_id < ?");
      params.push(lo, hi);
    }
    return this.db.statement<JobRow>(`SELECT * FROM jobs WHERE ${where.join(" AND ")} ORDER BY seq`).all(...params);
  }

  /** Jobs not ended, in every sandbox, in acceptance order. */
  unfinishedJobs(): JobRow[] {
    return this.db.statement<JobRow>(`SELECT * FROM jobs WHERE status IN ${UNFINISHED} ORDER BY seq`).all();
  }

  /** Jobs not ended in every sandbox. */
  countAllUnfinished(): number {
    return (
      this.db.statement<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE status IN ${UNFINISHED}`).get()?.n ?? 0
    );
  }

  countUnfinished(sandboxId: string): number {
    const row = this.db
      .statement<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE sandbox_id = ? AND status IN ${UNFINISHED}`)
      .get(sandboxId);
    return row?.n ?? 0;
  }

  insertOutput(jobId: string, chunk: JobOutputRow): void {
    this.db
      .statement("INSERT INTO job_output (job_id, seq, stream, byte_offset, head, data) VALUES (?, ?, ?, ?, ?, ?)")
      .run(jobId, chunk.seq, chunk.stream, chunk.byte_offset, chunk.head, chunk.data);
  }

  deleteOutput(jobId: string, seq: number): void {
    this.db.statement("DELETE FROM job_output WHERE job_id = ? AND seq = ?").run(jobId, seq);
  }

  /**
   * Chunks after `afterSeq`, oldest first, while their data stays within `limitBytes`
   * (at least one chunk when any is there, however large).
   */
  readOutput(jobId: string, afterSeq: number, limitBytes: number): JobOutputRow[] {
    const rows: JobOutputRow[] = [];
    let bytes = 0;
    const stmt = this.db.statement<JobOutputRow>(
      "SELECT seq, stream, byte_offset, head, data FROM job_output WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT 64",
    );
    for (let after = afterSeq; ; ) {
      const batch = stmt.all(jobId, after);
      for (const row of batch) {
        if (rows.length > 0 && bytes + row.data.length > limitBytes) return rows;
        rows.push(row);
        bytes += row.data.length;
        if (bytes >= limitBytes) return rows;
      }
      if (batch.length < 64) return rows;
      after = batch[batch.length - 1]!.seq;
    }
  }
}
