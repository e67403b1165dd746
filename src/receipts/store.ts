// The receipt store: write-before-dispatch, append-only observations, and a
// classification derived from them. Safe for many concurrent sbx processes
// (WAL, busy_timeout, BEGIN IMMEDIATE for every write).

import { newUniqueId, prefixRange } from "../common/ids.js";
import { randomBytes } from "../platform/random.js";
import { sha256Hex } from "../platform/sha256.js";
import { type Database, migrate, openDatabase, preloadSqliteDriver, preparingOnce } from "../platform/sqlite.js";
import type { Classification } from "./classifications.js";
import { type Classified, decidingObservation, type RequestKind } from "./classify.js";
import type { BundleMeta } from "./bundle.js";
import { type ChainAppender, pruneChained, withChain } from "./chain-log.js";
import { AmbiguousReceipt, ReceiptNotFound, storeFailure } from "./errors.js";
import { type ListFilter, listQuery } from "./list-query.js";
import { MIGRATIONS } from "./migrations.js";
import type { VerifyReport } from "./verify.js";

export type ReceiptKind = RequestKind;
export type ObservationSource = "dispatch" | "answer" | "refresh" | "wait" | "recover" | "cancel";

export interface NewReceipt {
  kind: ReceiptKind;
  /** null: sent where no profile points (--api-url, SBX_API_URL). */
  profile: string | null;
  apiUrl: string;
  sandbox: string;
  idempotencyKey: string;
  method: string;
  path: string;
  /** The exact bytes that will be sent. */
  body: Buffer;
  /** The MCP tool call it was made for (sbx mcp): the tool's name and the client's request id. */
  mcp?: { tool: string; requestId: string } | undefined;
}

export interface ReceiptRow {
  receipt_id: string;
  kind: ReceiptKind;
  /** null: sent where no profile points (--api-url, SBX_API_URL). */
  profile: string | null;
  api_url: string;
  sandbox_id: string;
  idempotency_key: string;
  method: string;
  path: string;
  body: Buffer;
  body_sha256: string;
  created_at: string;
  /** The execution an `execute` receipt started, once known. */
  execution_id: string | null;
  /** The supervised process a `process_start` receipt created, once known. */
  process_id: string | null;
  /** The request id of the jobs a `jobs_submit` receipt admitted, once confirmed. */
  request_id: string | null;
  classification: Classification;
  /** The MCP tool that made it (sbx mcp); null for a command typed to sbx. */
  mcp_tool: string | null;
  /** The MCP request id of that tool call, as text; null with mcp_tool. */
  mcp_request_id: string | null;
}

export interface AttemptRow {
  attempt: number;
  dispatched_at: string;
  body_sha256: string;
  pid: number | null;
}

export interface ObservationRow {
  id: number;
  attempt: number | null;
  source: ObservationSource;
  at: string;
  classification: Classification | null;
  definitive: boolean;
  http_status: number | null;
  execution_id: string | null;
  process_id: string | null;
  request_id: string | null;
  /** The job whose end this observation of a jobs submission carries; null otherwise. */
  job_id: string | null;
  outcome: string | null;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  record_pending: boolean;
  error_code: string | null;
  error_message: string | null;
  retry_after_ms: number | null;
  stdout: string | null;
  stderr: string | null;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  /** The backend boot the answer named (its execution's, or its process's current run's); null when none. */
  boot: string | null;
  /** Why the command ended beyond its exit (`out_of_memory`), as the answer said; null when it said nothing more. */
  end_reason: string | null;
  /** The image digest the sandbox ran on, as the execution's record said; null: the host's root, or not said. */
  image_digest: string | null;
  /** What the command used, as the answer said (CommandUsage as JSON text); null when it said nothing. */
  usage: string | null;
  /** The connections refused while it ran, as the answer said (JSON text); null: none said. */
  egress_denied: string | null;
}

export interface StoredReceipt {
  receipt: ReceiptRow;
  attempts: AttemptRow[];
  observations: ObservationRow[];
}

function rowToObservation(r: Record<string, unknown>): ObservationRow {
  return {
    id: r.id as number,
    attempt: (r.attempt as number | null) ?? null,
    source: r.source as ObservationSource,
    at: r.at as string,
    classification: (r.classification as Classification | null) ?? null,
    definitive: r.definitive === 1,
    http_status: (r.http_status as number | null) ?? null,
    execution_id: (r.execution_id as string | null) ?? null,
    process_id: (r.process_id as string | null) ?? null,
    request_id: (r.request_id as string | null) ?? null,
    job_id: (r.job_id as string | null) ?? null,
    outcome: (r.outcome as string | null) ?? null,
    exit_code: (r.exit_code as number | null) ?? null,
    signal: (r.signal as string | null) ?? null,
    system_error: (r.system_error as string | null) ?? null,
    record_pending: r.record_pending === 1,
    error_code: (r.error_code as string | null) ?? null,
    error_message: (r.error_message as string | null) ?? null,
    retry_after_ms: (r.retry_after_ms as number | null) ?? null,
    stdout: (r.stdout as string | null) ?? null,
    stderr: (r.stderr as string | null) ?? null,
    stdout_truncated: r.stdout_truncated === 1,
    stderr_truncated: r.stderr_truncated === 1,
    boot: (r.boot as string | null) ?? null,
    end_reason: (r.end_reason as string | null) ?? null,
    image_digest: (r.image_digest as string | null) ?? null,
    usage: (r.usage as string | null) ?? null,
    egress_denied: (r.egress_denied as string | null) ?? null,
  };
}

/** An observation as the store would keep it, without storing it (an answer the store could not take). */
export function observationRow(
  c: Classified,
  source: ObservationSource,
  attempt: number | null,
  now = new Date(),
): ObservationRow {
  return {
    id: 0,
    attempt,
    source,
    at: now.toISOString(),
    classification: c.classification,
    definitive: c.definitive,
    http_status: c.http_status,
    execution_id: c.execution_id,
    process_id: c.process_id,
    request_id: c.request_id,
    job_id: c.job_id,
    outcome: c.outcome,
    exit_code: c.exit_code,
    signal: c.signal,
    system_error: c.system_error,
    record_pending: c.record_pending,
    error_code: c.error?.code ?? null,
    error_message: c.error?.message ?? null,
    retry_after_ms: c.retry_after_ms,
    stdout: c.stdout,
    stderr: c.stderr,
    stdout_truncated: c.stdout_truncated,
    stderr_truncated: c.stderr_truncated,
    boot: c.boot,
    end_reason: c.end_reason,
    image_digest: c.image_digest,
    usage: c.usage,
    egress_denied: c.egress_denied,
  };
}

/** The columns a prefix is looked for in, each with an index (migrations.ts). */
const PREFIX_COLUMNS = ["receipt_id", "execution_id", "process_id", "idempotency_key"] as const;
type PrefixColumn = (typeof PREFIX_COLUMNS)[number];

export interface StoreOptions {
  /**
   * How long one statement waits for another process's write lock before it fails
   * with ReceiptStoreBusy. Callers that wait longer retry (src/cli/store-access.ts).
   */
  busyTimeoutMs?: number;
  /** Applied to what is stored from an answer: secrets never reach the store. */
  redact?: (text: string, what: "message" | "output") => string;
}

/**
 * Every failure of SQLite or the file system leaves the store as ReceiptStoreBusy
 * or ReceiptStoreUnusable (naming the file); anything else is a bug and passes as is.
 */
export class ReceiptStore {
  private readonly redact: (text: string, what: "message" | "output") => string;
  private readonly busyTimeoutMs: number;

  private constructor(
    private readonly db: Database,
    readonly file: string,
    opts: StoreOptions,
  ) {
    this.redact = opts.redact ?? ((t) => t);
    this.busyTimeoutMs = opts.busyTimeoutMs ?? 15_000;
  }

  /** Loads what open() needs ahead (the SQLite driver, on Node); open() works without it, slower. */
  static preload(): Promise<void> {
    return preloadSqliteDriver();
  }

  static open(file: string, opts: StoreOptions = {}): ReceiptStore {
    let db: Database | null = null;
    try {
      db = openDatabase(file, { mode: 0o600, busyTimeoutMs: opts.busyTimeoutMs ?? 15_000 });
      migrate(db, MIGRATIONS);
      return new ReceiptStore(preparingOnce(db), file, opts);
    } catch (err) {
      try {
        db?.close();
      } catch {
        // the open failed already; that error is the one to report
      }
      throw storeFailure(err, file);
    }
  }

  /** Runs one unit of work, naming the file in any failure of the store. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw storeFailure(err, this.file);
    }
  }

  close(): void {
    this.db.close();
  }

  /**
   * The payload of a signed bundle (bundle.ts) of the receipts created at or after
   * `since`. (Its code loads when asked for: an exec never needs it.)
   */
  async bundlePayload(since: string | null, now = new Date()): Promise<{ text: string; meta: BundleMeta }> {
    const { bundlePayload } = await import("./bundle.js");
    return this.guard(() => bundlePayload(this.db, since, now));
  }

  /** Recomputes the chain over every receipt (docs/receipt-chain.md), in one read snapshot. */
  async verify(opts: { threads?: number } = {}): Promise<VerifyReport> {
    const { verifyStore } = await import("./verify-store.js");
    try {
      return await verifyStore(this.db, { file: this.file, busyTimeoutMs: this.busyTimeoutMs, ...opts });
    } catch (err) {
      throw storeFailure(err, this.file);
    }
  }

  /**
   * Writes the receipt, its first attempt and a `dispatched` marker in one
   * committed transaction. Call this before the first byte is sent.
   */
  createForDispatch(input: NewReceipt, now = new Date()): ReceiptRow {
    return this.guard(() => {
      const at = now.toISOString();
      const sha = sha256Hex(input.body);
      const receiptId = this.db.transaction(() => {
        // Drawn inside the write transaction: no other process can take its short form meanwhile.
        const id = newUniqueId("rcp", (short) => this.startsAnId("receipt_id", short), randomBytes);
        this.db
          .prepare(
            `INSERT INTO receipts (receipt_id, kind, profile, api_url, sandbox_id, idempotency_key, method, path,
               body, body_sha256, created_at, classification, mcp_tool, mcp_request_id)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'dispatched', ?, ?)`,
          )
          .run(
            id,
            input.kind,
            input.profile,
            input.apiUrl,
            input.sandbox,
            input.idempotencyKey,
            input.method,
            input.path,
            input.body,
            sha,
            at,
            input.mcp?.tool ?? null,
            input.mcp?.requestId ?? null,
          );
        withChain(this.db, (chain) => {
          chain.appendRequest(id);
          this.insertAttempt(chain, id, 1, at, sha);
        });
        return id;
      });
      return this.getRow(receiptId);
    });
  }

  /** Records a new send of the same key and body bytes (resubmit). Returns the attempt number. */
  beginAttempt(receiptId: string, now = new Date()): number {
    return this.guard(() =>
      this.db.transaction(() => {
        const row = this.getRow(receiptId);
        const last = this.db
          .prepare<{ n: number | null }>("SELECT MAX(attempt) AS n FROM attempts WHERE receipt_id = ?")
          .get(receiptId);
        const attempt = (last?.n ?? 0) + 1;
        withChain(this.db, (chain) =>
          this.insertAttempt(chain, receiptId, attempt, now.toISOString(), row.body_sha256),
        );
        this.refreshClassification(receiptId);
        return attempt;
      }),
    );
  }

  /** An attempt and its `dispatch` observation, each appended to the chain. */
  private insertAttempt(chain: ChainAppender, receiptId: string, attempt: number, at: string, sha: string): void {
    this.db
      .prepare("INSERT INTO attempts (receipt_id, attempt, dispatched_at, body_sha256, pid) VALUES (?, ?, ?, ?, ?)")
      .run(receiptId, attempt, at, sha, process.pid);
    chain.appendAttempt(receiptId, attempt);
    const { lastInsertRowid } = this.db
      .prepare(
        `INSERT INTO observations (receipt_id, attempt, source, at, classification, definitive)
         VALUES (?, ?, 'dispatch', ?, 'dispatched', 0)`,
      )
      .run(receiptId, attempt, at);
    chain.appendObservation(receiptId, Number(lastInsertRowid));
  }

  /** Appends one observation and re-derives the receipt's classification, atomically. */
  recordObservation(
    receiptId: string,
    source: Exclude<ObservationSource, "dispatch">,
    c: Classified,
    opts: { attempt?: number | null; now?: Date } = {},
  ): void {
    this.guard(() => {
      const at = (opts.now ?? new Date()).toISOString();
      this.db.transaction(() => {
        const { lastInsertRowid } = this.db
          .prepare(
            `INSERT INTO observations (receipt_id, attempt, source, at, classification, definitive, http_status,
               execution_id, process_id, request_id, outcome, exit_code, signal, system_error, record_pending,
               error_code, error_message, retry_after_ms, stdout, stderr, stdout_truncated, stderr_truncated, boot,
               end_reason, job_id, image_digest, usage, egress_denied)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            receiptId,
            opts.attempt ?? null,
            source,
            at,
            c.classification,
            c.definitive ? 1 : 0,
            c.http_status,
            c.execution_id,
            c.process_id,
            c.request_id,
            c.outcome,
            c.exit_code,
            c.signal,
            c.system_error,
            c.record_pending ? 1 : 0,
            c.error?.code ?? null,
            c.error ? this.redact(c.error.message, "message") : null,
            c.retry_after_ms,
            c.stdout === null ? null : this.redact(c.stdout, "output"),
            c.stderr === null ? null : this.redact(c.stderr, "output"),
            c.stdout_truncated ? 1 : 0,
            c.stderr_truncated ? 1 : 0,
            c.boot,
            c.end_reason,
            c.job_id,
            c.image_digest,
            c.usage,
            c.egress_denied,
          );
        withChain(this.db, (chain) => chain.appendObservation(receiptId, Number(lastInsertRowid)));
        for (const column of ["execution_id", "process_id", "request_id"] as const) {
          if (c[column] === null) continue;
          this.db
            .prepare(`UPDATE receipts SET ${column} = ? WHERE receipt_id = ? AND ${column} IS NULL`)
            .run(c[column], receiptId);
        }
        this.refreshClassification(receiptId);
      });
    });
  }

  /**
   * Remembers the execution id as soon as it is known (a stream's `started` event),
   * so that a crash before the answer still leaves a receipt that can be observed by id.
   */
  noteExecutionId(receiptId: string, executionId: string): void {
    this.guard(() => {
      this.db.transaction(() => {
        const { changes } = this.db
          .prepare("UPDATE receipts SET execution_id = ? WHERE receipt_id = ? AND execution_id IS NULL")
          .run(executionId, receiptId);
        // What a receipt learned outside an observation is an entry of its own.
        if (changes > 0) {
          withChain(this.db, (chain) => chain.appendNote(receiptId, "execution_id", { execution_id: executionId }));
        }
      });
    });
  }

  private refreshClassification(receiptId: string): void {
    const deciding = decidingObservation(this.observations(receiptId));
    this.db
      .prepare("UPDATE receipts SET classification = ? WHERE receipt_id = ?")
      .run(deciding?.classification ?? "dispatched", receiptId);
  }

  private getRow(receiptId: string): ReceiptRow {
    const row = this.db.prepare<ReceiptRow>("SELECT * FROM receipts WHERE receipt_id = ?").get(receiptId);
    if (!row) throw new ReceiptNotFound(receiptId);
    return row;
  }

  private observations(receiptId: string): ObservationRow[] {
    return this.db
      .prepare("SELECT * FROM observations WHERE receipt_id = ? ORDER BY id")
      .all(receiptId)
      .map(rowToObservation);
  }

  get(receiptId: string): StoredReceipt {
    return this.guard(() => {
      const receipt = this.getRow(receiptId);
      const attempts = this.db
        .prepare<AttemptRow>(
          "SELECT attempt, dispatched_at, body_sha256, pid FROM attempts WHERE receipt_id = ? ORDER BY attempt",
        )
        .all(receiptId);
      return { receipt, attempts, observations: this.observations(receiptId) };
    });
  }

  /** True when some receipt's `column` starts with `prefix` (an index range, not a scan). */
  private startsAnId(column: PrefixColumn, prefix: string): boolean {
    const { lo, hi } = prefixRange(prefix);
    return (
      this.db.prepare(`SELECT 1 FROM receipts WHERE ${column} >= ? AND ${column} < ? LIMIT 1`).get(lo, hi) !== undefined
    );
  }

  /**
   * Finds a receipt by receipt id, execution id, process id or idempotency key (a
   * jobs submission's request id), exactly, or else by a unique prefix of any of them
   * (4 characters at least; the short form of a receipt id, rcp_ and 8, names one).
   */
  resolve(ref: string): string {
    return this.guard(() => {
      const exact = this.db
        .prepare<{ receipt_id: string }>(
          `SELECT receipt_id FROM receipts
           WHERE receipt_id = @ref OR execution_id = @ref OR process_id = @ref OR idempotency_key = @ref
           ORDER BY created_at DESC`,
        )
        .all({ ref })
        .map((r) => r.receipt_id);
      const unique = [...new Set(exact)];
      if (unique.length === 1) return unique[0]!;
      if (unique.length > 1) throw new AmbiguousReceipt(ref, unique);
      if (ref.length < 4) throw new ReceiptNotFound(ref);
      // Each column through its index (a range, case as typed), never a scan of every receipt.
      const { lo, hi } = prefixRange(ref);
      const matching = PREFIX_COLUMNS.map(
        (c) => `SELECT receipt_id, created_at FROM receipts WHERE ${c} >= @lo AND ${c} < @hi`,
      ).join(" UNION ");
      const matches = this.db
        .prepare<{ receipt_id: string }>(`SELECT receipt_id FROM (${matching}) ORDER BY created_at DESC LIMIT 5`)
        .all({ lo, hi })
        .map((r) => r.receipt_id);
      if (matches.length === 1) return matches[0]!;
      if (matches.length > 1) {
        const total = this.db.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM (${matching})`).get({ lo, hi })!.n;
        throw new AmbiguousReceipt(ref, matches, total);
      }
      throw new ReceiptNotFound(ref);
    });
  }

  /** Newest first. */
  list(filter: ListFilter = {}): StoredReceipt[] {
    return this.guard(() => {
      const { sql, params } = listQuery(filter);
      return this.db
        .prepare<{ receipt_id: string }>(sql)
        .all(...params)
        .map((r) => this.get(r.receipt_id));
    });
  }

  /**
   * Deletes receipts created before `before`, but those whose classification is in
   * `keep` (receipts in doubt are what an incident needs); says how many of those it
   * kept. The chain keeps a checkpoint of what went (chain-log.ts: pruneChained).
   */
  prune(
    before: string,
    opts: { keep?: readonly Classification[]; now?: Date } = {},
  ): { deleted: number; kept: number } {
    return this.guard(() =>
      this.db.transaction(() => pruneChained(this.db, before, opts.keep ?? [], opts.now ?? new Date())),
    );
  }
}
