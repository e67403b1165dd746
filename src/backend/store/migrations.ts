// The backend database's schema (<dataDir>/backend.db), as numbered, forward-only
// migrations run by store/db.ts. Each table's row access lives with its domain:
// sandboxes/store.ts, executions/store.ts (executions and their events),
// processes/store.ts, jobs/store.ts, http/idempotency.ts (idempotency keys).

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
  // Retention (retention/retention.ts): when an execution's full output files were dropped for
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
  // Ownership fences: the backend boot (LiveRuns.boot, not the machine's boot_id) an
  // execution ran in and a process's current run was started in.
  `
  ALTER TABLE executions ADD COLUMN daemon_boot TEXT;
  ALTER TABLE processes ADD COLUMN daemon_boot TEXT;
  `,
  // Each sandbox's resource limits (drivers/limits/spec.ts) as JSON; null: the defaults.
  // Why a command ended when neither it nor the backend ended it (out_of_memory).
  `
  ALTER TABLE sandboxes ADD COLUMN limits TEXT;
  ALTER TABLE executions ADD COLUMN end_reason TEXT;
  ALTER TABLE jobs ADD COLUMN end_reason TEXT;
  `,
  // Network modes (docs/drivers.md, "Network modes"): a sandbox made with a network
  // before them had the host's, and keeps it (null reads as network ? host : none);
  // published ports, as JSON ([{port, host_ip, host_port}]).
  `
  ALTER TABLE sandboxes ADD COLUMN network_mode TEXT;
  ALTER TABLE sandboxes ADD COLUMN publish TEXT;
  `,
  // Executions and supervised processes run on a terminal (docs/protocol.md,
  // "Terminals"): a process keeps the size asked for ({cols, rows} as JSON).
  `
  ALTER TABLE executions ADD COLUMN tty INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE processes ADD COLUMN tty TEXT;
  `,
  // Sandboxes from images (docs/images.md): the image a sandbox's root was made from,
  // as JSON ({reference, digest, platform}); null: the host's system directories.
  `
  ALTER TABLE sandboxes ADD COLUMN image TEXT;
  `,
  // Evidence (docs/images.md, "Evidence"): the image digest the sandbox's root was made
  // from when an execution was admitted; null: the host's system directories.
  `
  ALTER TABLE executions ADD COLUMN image_digest TEXT;
  `,
  // What each execution and job used (docs/operations.md, "Per-command usage"), as JSON
  // (CommandUsage); null: not ended yet, or ended before usage was measured. A process's
  // runs keep theirs in last_run.
  `
  ALTER TABLE executions ADD COLUMN usage TEXT;
  ALTER TABLE jobs ADD COLUMN usage TEXT;
  `,
  // Sandbox labels (docs/protocol.md, "Labels"), as a JSON object; null: none.
  `
  ALTER TABLE sandboxes ADD COLUMN labels TEXT;
  `,
  // Egress by policy (docs/network.md): a sandbox's egress policy as JSON
  // ({allow_domains, deny_domains, allow_cidrs}) for network_mode allow-list; null otherwise.
  `
  ALTER TABLE sandboxes ADD COLUMN egress TEXT;
  `,
  // Idle stop (docs/operations.md): a sandbox's own idle timeout (0: off; null: the
  // daemon's default) and its environment's last stop by the backend ({at, reason} JSON).
  `
  ALTER TABLE sandboxes ADD COLUMN idle_timeout_ms INTEGER;
  ALTER TABLE sandboxes ADD COLUMN last_stop TEXT;
  `,
  // Egress evidence (docs/network.md, "Evidence"): the connections a sandbox's egress
  // proxy refused while an execution ran there, as JSON ({total, first}); null: none.
  `
  ALTER TABLE executions ADD COLUMN egress_denied TEXT;
  `,
];
