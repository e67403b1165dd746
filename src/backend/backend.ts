// The embedded backend, wired: startBackend takes what it owns for its life (the data
// directory's lock and its Unix socket: http/ownership.ts), opens backend.db
// (store/), builds the domains — sandboxes and their drivers, executions, supervised
// processes and jobs on one registry of live runs (runs/) — recovers what an earlier
// run left, and serves them at the HTTP edge (http/server.ts). `sbx daemon run` runs
// it (daemon.ts); tests start it in-process.

import { resolverFrom } from "./egress/index.js";
import fs from "node:fs";
import path from "node:path";
import { DAEMON_TOKEN_MIN_LENGTH, REQUEST_BODY_MAX_BYTES } from "../protocol/types.js";
import { DriverSet, type DriverSetOptions, daemonHost, type FollowedRun, type StreamBytes } from "./drivers/index.js";
import { DaemonStartError } from "./errors.js";
import {
  EventLog,
  ExecutionManager,
  type ExecutionRow,
  ExecutionRunner,
  DEFAULT_KILL_GRACE_MS,
  ExecutionStore,
} from "./executions/index.js";
import type { Services } from "./http/context.js";
import { DEFAULT_RECORD_PENDING_PUBLISH_MS, FaultInjector, FaultMemory, parseFaultSpec } from "./http/faults.js";
import { DEFAULT_KEY_RETENTION_MS, IdempotencyKeys } from "./http/idempotency.js";
import { bindUnixSocket, lockDataDir, type OwnedSocket, preparePrivateDir } from "./http/ownership.js";
import { HttpEdge } from "./http/server.js";
import type { Mount } from "./http/mount.js";
import { DEFAULT_SSE_PING_MS } from "./http/sse.js";
import { JobManager } from "./jobs/index.js";
import { DEFAULT_LOG_KEEP_BYTES, DEFAULT_LOG_SEGMENT_BYTES, ProcessSupervisor } from "./processes/index.js";
import { LiveRuns, recordedLeaderAlive } from "./runs/index.js";
import { IDLE_SWEEP_MS, IdleStop, type SandboxRow, SandboxRegistry } from "./sandboxes/index.js";
import { formatDuration } from "../common/duration.js";
import { BackendStore } from "./store/index.js";
import { DEFAULT_RETAIN_BYTES, DEFAULT_RETAIN_MS, Retention } from "./retention/index.js";

export interface BackendOptions {
  /** Holds backend.db and the sandboxes' workspaces. Created 0700 if missing. */
  dataDir: string;
  /** Unix socket to listen on (mode 0600, its directory 0700). */
  socketPath?: string;
  /** TCP listener; requires `token`. Port 0 picks a free port (see BackendHandle.port). */
  listen?: { host: string; port: number };
  token?: string;
  /** Fault spec, see FAULT_SPEC_HELP. */
  faults?: string;
  /** Seed for probabilistic fault rules (`p=`), for repeatable runs. */
  faultSeed?: number;
  /** Calls onIdle after this long with no request and nothing running. */
  idleExitMs?: number;
  onIdle?: () => void;
  /** How long Idempotency-Keys are kept. Default 7 days. */
  keyRetentionMs?: number;
  /** One line per request (method, path, status, ms) and lifecycle notes. Never headers. */
  log?: (line: string) => void;
  /** Between SIGTERM and SIGKILL to a process group. Default 5 s. */
  killGraceMs?: number;
  /** When a record kept with record_pending (fault injection) is published. Default 3 s. */
  recordPendingPublishMs?: number;
  /** Largest request body accepted. Default 16 MiB. */
  maxBodyBytes?: number;
  /** Size at which a supervised process's log file (per stream) is rotated. Default 8 MiB. */
  processLogSegmentBytes?: number;
  /** Bytes of log kept per stream of a supervised process (oldest files deleted beyond). Default 64 MiB. */
  processLogKeepBytes?: number;
  /** How often buffered execution events are committed (one transaction per batch). Default 25 ms. */
  eventFlushMs?: number;
  /** Events kept per execution log (at least 2); older ones become a `reset` snapshot. Null keeps all. Default 50,000. */
  eventRetention?: number | null;
  /** Output bytes put into events per execution; past it, `gap` events. Default 5 MiB. */
  eventOutputBudget?: number;
  /**
   * Bytes of each stream of an execution kept in its output file (GET …/output);
   * past it the file stops growing, `_bytes` keep counting and `_truncated` is true.
   * Default 256 MiB.
   */
  executionOutputMaxBytes?: number;
  /** Bytes past the cap a live reader may fall behind before the run's output is paused (live-output.ts). Default 8 MiB. */
  liveQueueMaxBytes?: number;
  /** Between `: ping` comments on event streams. Default 15 s. */
  ssePingMs?: number;
  /**
   * The sandbox drivers (e.g. another bwrap program); probed once at start. Their
   * host (the daemon's uid, user name and PATH) is this process's unless given.
   */
  drivers?: Partial<DriverSetOptions>;
  /** Finished executions and exited processes older than this go (never sooner than keyRetentionMs). Default 30 days. */
  retainMs?: number;
  /** Past this total (database, execution output, process logs), the oldest finished outputs go first. Default 5 GiB. */
  retainBytes?: number;
  /** Between retention sweeps. Default 10 minutes. */
  retentionSweepMs?: number;
  /**
   * The backend's clock (default Date.now): the times records say, runs' starts and
   * ends, key and retention windows, restart back-off and process deadlines. Timers
   * still wait real time; a test moves this clock instead of sleeping.
   */
  now?: () => number;
  /**
   * Sandboxes with no idle timeout of their own stop their environment after this long
   * with nothing running in them (docs/operations.md, "Idle stop"). Default: off.
   */
  sandboxIdleTimeoutMs?: number | null;
  /** Between idle-stop sweeps (real time; the idle time itself is read from `now`). Default 1 s. */
  idleSweepMs?: number;
  /** Jobs running at once per sandbox; the rest wait as `queued`. Default 4. */
  jobConcurrency?: number;
  /** Output bytes kept per job (the first half and the last half; the middle is omitted). Default 8 MiB. */
  jobOutputBudgetBytes?: number;
  /**
   * Records every exchange into a file of this directory (http/wire-record.ts), for the
   * validating run that holds the traffic to the OpenAPI document. A test tool.
   */
  wireRecord?: string;
  /**
   * Handlers served at paths of their own beside /api/v1 (http/mount.ts), authenticated
   * as every route: `sbx daemon run` mounts its MCP server at /mcp.
   */
  mounts?: readonly Mount[];
}

export interface CloseOptions {
  /**
   * Test hook: stop serving and close the database WITHOUT ending running process
   * groups or recording their ends, as a crash would. Restart recovery then finds them.
   */
  simulateCrash?: boolean;
}

export interface BackendHandle {
  socketPath?: string;
  port?: number;
  /** Stops accepting, ends running process groups (TERM, then KILL), marks them, removes the socket. */
  close(opts?: CloseOptions): Promise<void>;
}

export const DEFAULT_MAX_BODY_BYTES = REQUEST_BODY_MAX_BYTES;

export async function startBackend(opts: BackendOptions): Promise<BackendHandle> {
  if (!opts.socketPath && !opts.listen) {
    throw new DaemonStartError("no_listener", "the backend needs a Unix socket path or a TCP listen address");
  }
  if (opts.listen && !opts.token) {
    throw new DaemonStartError("token_required", "listening on TCP requires a token");
  }
  if (opts.listen && opts.token && opts.token.length < DAEMON_TOKEN_MIN_LENGTH) {
    throw new DaemonStartError(
      "token_too_weak",
      `the TCP token is ${opts.token.length} characters; at least ${DAEMON_TOKEN_MIN_LENGTH} are required`,
    );
  }
  const injector = new FaultInjector(
    parseFaultSpec(opts.faults ?? ""),
    opts.faultSeed === undefined ? {} : { seed: opts.faultSeed },
  );
  // Before anything is held: a driver whose own options are broken stops the start here.
  const host = opts.drivers?.host ?? daemonHost();
  const drivers = new DriverSet({
    ...opts.drivers,
    host,
    dataDir: opts.dataDir,
    bwrap: { runDir: path.join(opts.dataDir, "run"), log: opts.log ?? (() => {}), ...opts.drivers?.bwrap },
    // Names the egress proxies resolve: the system's, or a hosts file's only (docs/network.md, "Names").
    egress: opts.drivers?.egress ?? { resolve: resolverFrom(process.env.SBX_EGRESS_HOSTS) },
  });
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  preparePrivateDir(opts.dataDir);
  // Ownership first, for the backend's whole life: the data directory's lock, then the
  // socket. A backend that holds neither never opens backend.db, so it cannot "recover"
  // (end) the work of the backend that owns them.
  const lock = lockDataDir(opts.dataDir);
  let unix: OwnedSocket | null = null;
  let store: BackendStore;
  try {
    if (opts.socketPath) unix = await bindUnixSocket(opts.socketPath);
    store = new BackendStore(path.join(opts.dataDir, "backend.db"));
  } catch (err) {
    if (unix) await unix.release();
    lock.release();
    throw err;
  }
  // From here to recover() nothing awaits: the socket's handler is attached before any request is read.
  const backend = new Backend(opts, store, { drivers, asRoot: host.uid === 0 }, injector, lock, unix);
  try {
    backend.executions.recover((row, had) => backend.followExecution(row, had));
    backend.processes.recover();
    backend.jobs.recover();
    backend.recoverLimits();
    backend.retention.start(opts.retentionSweepMs);
    backend.idle.start();
    await backend.sandboxes.openPublishedPorts();
    await backend.edge.listen();
  } catch (err) {
    await backend.close();
    throw err;
  }
  return backend.handle();
}

class Backend {
  readonly executions: ExecutionManager;
  readonly sandboxes: SandboxRegistry;
  readonly processes: ProcessSupervisor;
  readonly retention: Retention;
  readonly jobs: JobManager;
  /** Stops the environments of sandboxes idle for their timeout (sandboxes/idle.ts). */
  readonly idle: IdleStop;
  /** Every run the backend holds (executions, processes, jobs): shutdown, a simulated crash, idleness. */
  private readonly runs = new LiveRuns();
  readonly edge: HttpEdge;
  private readonly drivers: DriverSet;
  private readonly log: (line: string) => void;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly opts: BackendOptions,
    private readonly store: BackendStore,
    /** The drivers, and whether the daemon runs as root (its DriverHost's uid is 0). */
    { drivers, asRoot }: { drivers: DriverSet; asRoot: boolean },
    injector: FaultInjector,
    /** Held for the backend's life: no other backend opens this data directory meanwhile. */
    private readonly lock: { release(): void },
    /** The Unix socket this backend bound (before opening the database). */
    private readonly unix: OwnedSocket | null,
  ) {
    const log = opts.log ?? (() => {});
    this.log = log;
    this.drivers = drivers;
    const isolation = drivers.status();
    log(
      isolation.bwrap.available
        ? `isolation: bwrap (${isolation.bwrap.version ?? "version unknown"})`
        : `isolation: none — ${isolation.bwrap.reason}`,
    );
    const now = opts.now ?? Date.now;
    const sandboxes = new SandboxRegistry(store, opts.dataDir, drivers, now, asRoot, log);
    this.sandboxes = sandboxes;
    sandboxes.removeStagedUploads();
    sandboxes.assignIdentities();
    const events = new EventLog({
      store,
      now,
      outputDir: (sandboxId, executionId) => path.join(sandboxes.sandboxDir(sandboxId), "executions", executionId),
      log,
      ...(opts.eventFlushMs !== undefined && { flushMs: opts.eventFlushMs }),
      ...(opts.eventRetention !== undefined && { retainEvents: opts.eventRetention }),
      ...(opts.eventOutputBudget !== undefined && { outputBudget: opts.eventOutputBudget }),
      ...(opts.executionOutputMaxBytes !== undefined && { outputMaxBytes: opts.executionOutputMaxBytes }),
      ...(opts.liveQueueMaxBytes !== undefined && { liveQueueMaxBytes: opts.liveQueueMaxBytes }),
    });
    this.executions = new ExecutionManager({
      store,
      events,
      runs: this.runs,
      runner: new ExecutionRunner({
        now,
        ...(opts.killGraceMs !== undefined && { killGraceMs: opts.killGraceMs }),
      }),
      log,
      now,
      onSettled: () => this.edge?.armIdle(),
      egress: drivers.egress,
    });
    this.processes = new ProcessSupervisor({
      store,
      runs: this.runs,
      sandboxes,
      logLimits: {
        segmentBytes: opts.processLogSegmentBytes ?? DEFAULT_LOG_SEGMENT_BYTES,
        keepBytes: opts.processLogKeepBytes ?? DEFAULT_LOG_KEEP_BYTES,
      },
      killGraceMs: opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
      log,
      onSettled: () => this.edge?.armIdle(),
      now,
    });
    this.jobs = new JobManager({
      store,
      runs: this.runs,
      sandboxes,
      killGraceMs: opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
      ...(opts.jobConcurrency !== undefined && { concurrency: opts.jobConcurrency }),
      ...(opts.jobOutputBudgetBytes !== undefined && { outputBudgetBytes: opts.jobOutputBudgetBytes }),
      log,
      onSettled: () => this.edge?.armIdle(),
      now,
    });
    this.retention = new Retention({
      store,
      executionRows: new ExecutionStore(store),
      events,
      sandboxes,
      processes: this.processes,
      retainMs: opts.retainMs ?? DEFAULT_RETAIN_MS,
      retainBytes: opts.retainBytes ?? DEFAULT_RETAIN_BYTES,
      keyRetentionMs: opts.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS,
      log,
      now,
    });
    this.idle = new IdleStop({
      now,
      defaultTimeoutMs: opts.sandboxIdleTimeoutMs ?? null,
      sweepMs: opts.idleSweepMs ?? IDLE_SWEEP_MS,
      rows: () => sandboxes.rows(),
      // A paused sandbox is left as it is: its pause was asked for (its processes keep their state).
      running: (row) => ["running", "starting"].includes(sandboxes.environment(row)?.state ?? "stopped"),
      work: (sandboxId) => this.workIn(sandboxId),
      stop: (row, idleMs) => this.stopIdle(row, idleMs),
      log,
    });
    this.runs.onChange = (sandboxId) => this.idle.touch(sandboxId);
    sandboxes.watchIdle(this.idle);
    const services: Services = {
      sandboxes,
      drivers,
      runs: this.runs,
      executions: this.executions,
      processes: this.processes,
      jobs: this.jobs,
      events,
      retention: this.retention,
      ssePingMs: opts.ssePingMs ?? DEFAULT_SSE_PING_MS,
      idempotency: new IdempotencyKeys(store, {
        now,
        ...(opts.keyRetentionMs !== undefined && { retentionMs: opts.keyRetentionMs }),
      }),
      now,
      startedAt: new Date(now()).toISOString(),
    };
    this.edge = new HttpEdge({
      services,
      injector,
      faultMemory: new FaultMemory(opts.recordPendingPublishMs ?? DEFAULT_RECORD_PENDING_PUBLISH_MS),
      log,
      maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      token: opts.token ?? null,
      unix,
      ...(opts.socketPath !== undefined && { socketPath: opts.socketPath }),
      ...(opts.listen !== undefined && { listen: opts.listen }),
      ...(opts.idleExitMs !== undefined && { idleExitMs: opts.idleExitMs }),
      ...(opts.onIdle !== undefined && { onIdle: opts.onIdle }),
      ...(opts.wireRecord !== undefined && { wireRecord: opts.wireRecord }),
      ...(opts.mounts !== undefined && { mounts: opts.mounts }),
      // No execution runs, no supervised process runs, waits to restart or is being stopped, and no job is unfinished.
      nothingRuns: () => this.runs.count() === 0 && this.jobs.unfinishedCount === 0,
    });
  }

  /** What runs in a sandbox, in words, for idle stop: [] when nothing. */
  private workIn(sandboxId: string): string[] {
    const live = this.runs.countIn(sandboxId);
    const jobs = Math.max(live.job, this.jobs.unfinishedIn(sandboxId));
    const said = (n: number, one: string, many: string) => (n === 0 ? [] : [`${n} ${n === 1 ? one : many}`]);
    return [
      ...said(live.execution, "execution", "executions"),
      ...said(live.process, "supervised process", "supervised processes"),
      ...said(jobs, "job", "jobs"),
    ];
  }

  /** An idle sandbox's environment stops as `sandbox stop` stops it (nothing runs in it), kept as last_stop idle. */
  private async stopIdle(row: SandboxRow, idleMs: number): Promise<void> {
    this.sandboxes.disconnect(row, "the sandbox stopped: idle");
    const stopped = await this.sandboxes.stopEnvironment(row, "idle");
    if (stopped.was_running) {
      this.log(`sandbox ${row.name} stopped: idle (nothing ran in it for ${formatDuration(idleMs)})`);
    }
  }

  /** The cgroups an earlier backend of this data directory left (it was killed): removed, said in one line. */
  /**
   * An execution an earlier backend left running, followed again where its sandbox's
   * driver lets its runs outlive the backend (slurm; docs/drivers.md, "A daemon restart").
   */
  followExecution(row: ExecutionRow, had: StreamBytes): FollowedRun | null {
    const sandbox = this.sandboxes.byId(row.sandbox_id);
    if (sandbox === undefined || row.pgid === null) return null;
    const driver = this.sandboxes.driver(sandbox);
    const group = { pgid: row.pgid, startTime: row.pgid_start_time, bootId: row.boot_id };
    return (
      driver.follow?.(this.sandboxes.placement(sandbox), { kind: "execution", id: row.execution_id }, had, () =>
        recordedLeaderAlive(group),
      ) ?? null
    );
  }

  recoverLimits(): void {
    const sandboxes = new Set(this.sandboxes.rows().map((r) => r.sandbox_id));
    const found = this.drivers.limits.recover((id) => sandboxes.has(id));
    if (found.removed.length > 0 || found.killed > 0) {
      this.log(
        `limits: removed ${found.removed.length} cgroup(s) an earlier daemon left${found.killed > 0 ? `, ending ${found.killed} process(es) of removed sandboxes` : ""}`,
      );
    }
  }

  handle(): BackendHandle {
    return {
      ...(this.opts.socketPath !== undefined && { socketPath: this.opts.socketPath }),
      ...(this.edge.port !== undefined && { port: this.edge.port }),
      close: (opts) => this.close(opts),
    };
  }

  close(opts: CloseOptions = {}): Promise<void> {
    this.closing ??= this.shutdown(opts);
    return this.closing;
  }

  private async shutdown(opts: CloseOptions): Promise<void> {
    // First, while everything still serves: a mount's sessions end their calls' work.
    if (!opts.simulateCrash) await this.edge.closeMounts();
    this.retention.stop();
    await this.idle.close();
    this.sandboxes.closePublishedPorts();
    const stopped = this.edge.stopListening();
    if (opts.simulateCrash) {
      this.runs.abandon();
      this.executions.dropAfterCrash();
      this.jobs.dropAfterCrash();
      this.edge.dropConnections();
    } else {
      // A paused sandbox's runs can end only once thawed (docs/operations.md, "Pause and resume").
      this.drivers.limits.thawAll();
      // Blocking requests waiting on these runs get their answers now.
      await this.runs.shutdown();
      this.executions.closeAfterShutdown();
      this.jobs.closeAfterShutdown();
      await this.edge.flushConnections(stopped);
      // Every live sandbox ends with its backend (a real crash ends them too, through
      // --die-with-parent); then, every run ended, the sandboxes' cgroups go (a crash
      // leaves them to the next start), and the workspaces of their own size are
      // unmounted (mounted again at their next use).
      await this.drivers.shutdown();
      this.drivers.limits.close();
      this.drivers.workspaceDisks.close();
    }
    await stopped;
    // A simulated crash leaves what runs to restart recovery, like the rest.
    if (opts.simulateCrash) this.drivers.abandon();
    this.store.close();
    // Only our own socket (the file we bound, not one that replaced it since).
    this.unix?.removeFile();
    // Last: the data directory is free for another backend only once this one let go of it.
    this.lock.release();
    this.log("backend closed");
  }
}
