// The `slurm` driver (docs/drivers.md, "Slurm"): a sandbox is an allocation — a batch
// job holding the sandbox's resources on a node Slurm chooses, named after the sandbox
// — and each run a step in it (`srun --jobid J --overlap`, step.ts). The workspace is on
// the shared directory every node sees, so the daemon and the node read and write the
// same files. The daemon stays the API front; Slurm places the work.
//
// An allocation is found again by its name after a restart of the daemon (squeue), so
// one that Slurm still runs is reattached, never submitted twice. On the node a
// command runs as the daemon's user, in a network namespace of its own (unshare --net:
// network mode none), with the clean command environment (env -i); bwrap on the node
// is not used yet (said in `sandbox show`).

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Duplex } from "node:stream";
import type {
  DriverDescription,
  DriverHost,
  DriverProbe,
  EnvironmentStatus,
  EnvironmentStopped,
  FollowedRun,
  RunIdentity,
  SandboxChild,
  SandboxDriver,
  SandboxPlacement,
  SpawnRequest,
  StreamBytes,
} from "../driver.js";
import { type JobState, oneLine, type SlurmCluster } from "./cluster.js";
import { FollowedStep } from "./follow.js";
import { RunFiles, STEP_WRAPPER } from "./run-files.js";
import { SlurmStep } from "./step.js";

/** States in which an allocation still holds (or waits for) its resources. */
const LIVE = new Set(["PENDING", "CONFIGURING", "RUNNING", "RESIZING", "SUSPENDED", "REQUEUED"]);
const POLL_MS = 200;

interface Allocation {
  jobId: string | null;
  state: string;
  reason: string | null;
  node: string | null;
  startedAt: string | null;
  /** The job id once it runs; null when none is being had. */
  ready: Promise<string> | null;
}

export interface SlurmDriverOptions {
  host: DriverHost;
  cluster: SlurmCluster;
  /** The daemon's data directory: allocation names carry a digest of it, so two daemons never share one. */
  dataDir: string;
}

export class SlurmDriver implements SandboxDriver {
  readonly isolation = "slurm" as const;
  /** Allocations and their steps outlive the daemon; a restarted daemon finds them again by name. */
  readonly runsEndWithBackend = false;
  readonly startsHeld = false;
  private readonly allocations = new Map<string, Allocation>();
  private readonly prefix: string;
  private steps = 0;

  constructor(private readonly opts: SlurmDriverOptions) {
    this.prefix = `sbx-${createHash("sha256").update(path.resolve(opts.dataDir)).digest("hex").slice(0, 8)}-`;
  }

  probe(): DriverProbe {
    const { version, problem } = this.opts.cluster.version();
    return { available: problem === null, reason: problem, version };
  }

  workspacePath(placement: SandboxPlacement): string {
    return placement.workspaceDir;
  }

  commandPath(_placement: SandboxPlacement, hostPath: string): string {
    return hostPath;
  }

  /** The allocation's job name: the daemon's digest and the sandbox's id. */
  jobName(sandboxId: string): string {
    return `${this.prefix}${sandboxId}`;
  }

  /**
   * A run's name (its step's, and its files' directory on the shared directory): the
   * sandbox's allocation name and the run's identity, so a restarted daemon finds it
   * again from its record (reattach).
   */
  runName(sandboxId: string, env: Record<string, string>): string {
    const id =
      env.SBX_EXECUTION_ID !== undefined
        ? `e-${env.SBX_EXECUTION_ID}`
        : env.SBX_JOB_ID !== undefined
          ? `j-${env.SBX_JOB_ID}`
          : env.SBX_PROCESS_ID !== undefined
            ? `p-${env.SBX_PROCESS_ID}-${env.SBX_PROCESS_GENERATION ?? "0"}`
            : `r-${process.pid}-${++this.steps}`;
    return `${this.jobName(sandboxId)}-${id}`.replace(/[^A-Za-z0-9_.-]/g, "_");
  }

  spawn(req: SpawnRequest): SandboxChild {
    const name = this.runName(req.placement.sandboxId, req.env);
    const files = RunFiles.under(path.resolve(this.opts.cluster.settings.sharedDir), name);
    files.remove();
    files.create();
    const environment = Object.entries(req.env).map(([k, v]) => `${k}=${v}`);
    const srunArgs = [
      "--overlap",
      "--quiet",
      "--ntasks=1",
      "--nodes=1",
      `--job-name=${name}`,
      `--chdir=${req.cwd}`,
      `--output=${files.out}`,
      `--error=${files.err}`,
      ...(req.stdin ? [] : ["--input=none"]),
      "--",
      // On the node: the wrapper that writes how the command ended (run-files.ts).
      "perl",
      "-e",
      STEP_WRAPPER,
      files.status,
      // Network mode none: a network namespace of its own, only its loopback.
      "unshare",
      "--net",
      "--",
      "env",
      "-i",
      ...environment,
      ...req.argv,
    ];
    return new SlurmStep(this.opts.cluster, {
      srunArgs,
      stdin: req.stdin,
      name,
      files,
      allocation: this.ensure(req.placement),
      onAllocationGone: () => this.forget(req.placement.sandboxId),
      lastNode: () => this.allocations.get(req.placement.sandboxId)?.node ?? null,
    });
  }

  /** A run a killed daemon started, followed again from its files (follow.ts); null: srun never started. */
  follow(
    placement: SandboxPlacement,
    identity: RunIdentity,
    had: StreamBytes,
    leaderAlive: () => boolean,
  ): FollowedRun | null {
    const variable = { execution: "SBX_EXECUTION_ID", process: "SBX_PROCESS_ID", job: "SBX_JOB_ID" }[identity.kind];
    const env: Record<string, string> = { [variable]: identity.id };
    if (identity.kind === "process") env.SBX_PROCESS_GENERATION = String(identity.generation);
    const name = this.runName(placement.sandboxId, env);
    const files = RunFiles.under(path.resolve(this.opts.cluster.settings.sharedDir), name);
    if (!files.srunStarted()) return null;
    return new FollowedStep(this.opts.cluster, files, name, had, leaderAlive);
  }

  terminalSupport(): string | null {
    return "a terminal is not carried to a Slurm node yet (srun --pty is not wired in)";
  }

  describe(placement: SandboxPlacement): DriverDescription {
    const a = this.allocations.get(placement.sandboxId);
    return {
      isolation: "slurm",
      version: this.probe().version,
      user: this.opts.host.username,
      host_uid: this.opts.host.uid,
      namespaces: ["net"],
      host_paths_read_only: null,
      syscall_filter: null,
      slurm: {
        job_id: a?.jobId ?? null,
        state: a?.state ?? "NONE",
        reason: a?.reason ?? null,
        node: a?.node ?? null,
        partition: this.opts.cluster.settings.partition,
      },
    };
  }

  environment(placement: SandboxPlacement): EnvironmentStatus {
    const a = this.allocations.get(placement.sandboxId);
    const state = a === undefined || a.ready === null ? "stopped" : a.state === "RUNNING" ? "running" : "starting";
    return { state, started_at: state === "running" ? (a?.startedAt ?? null) : null, init_pid: null, processes: 0 };
  }

  async start(placement: SandboxPlacement): Promise<void> {
    await this.ensure(placement);
  }

  async stop(placement: SandboxPlacement): Promise<EnvironmentStopped> {
    const a = this.allocations.get(placement.sandboxId);
    const jobs = await this.opts.cluster.jobsNamed(this.jobName(placement.sandboxId));
    const live = jobs.filter((j) => LIVE.has(j.state));
    for (const j of live) {
      const out = await this.opts.cluster.run("scancel", [j.jobId]);
      if (out.code !== 0) throw new Error(`scancel ${j.jobId}: ${oneLine(out.stderr)}`);
    }
    if (a !== undefined) this.forget(placement.sandboxId);
    return { was_running: live.length > 0, ended: [] };
  }

  release(placement: SandboxPlacement): void {
    void this.stop(placement).catch(() => {});
  }

  connect(_placement: SandboxPlacement, _port: number): Promise<Duplex> {
    return Promise.reject(new Error("ports of a sandbox on a Slurm node are not forwarded yet"));
  }

  /** Allocations outlive the daemon on purpose: a restarted daemon reattaches them by name. */
  async shutdown(): Promise<void> {}

  private forget(sandboxId: string): void {
    this.allocations.delete(sandboxId);
  }

  /** The sandbox's running allocation's job id: found again, or submitted and waited for while Slurm queues it. */
  private ensure(placement: SandboxPlacement): Promise<string> {
    let a = this.allocations.get(placement.sandboxId);
    if (a === undefined) {
      a = { jobId: null, state: "NONE", reason: null, node: null, startedAt: null, ready: null };
      this.allocations.set(placement.sandboxId, a);
    }
    if (a.ready !== null) return a.ready;
    const alloc = a;
    const ready = this.allocate(placement, alloc);
    alloc.ready = ready;
    ready.catch(() => {
      if (this.allocations.get(placement.sandboxId) === alloc) this.allocations.delete(placement.sandboxId);
    });
    return ready;
  }

  private async allocate(placement: SandboxPlacement, a: Allocation): Promise<string> {
    const { cluster } = this.opts;
    const shared = path.resolve(cluster.settings.sharedDir);
    const relative = path.relative(shared, path.resolve(placement.workspaceDir));
    if (relative.startsWith("..") || path.isAbsolute(relative)) {
      throw new Error(
        `the workspace ${placement.workspaceDir} is not on the shared directory ${shared}: the nodes would not see it (put the daemon's data directory under it)`,
      );
    }
    const name = this.jobName(placement.sandboxId);
    let found: JobState[];
    try {
      found = await cluster.jobsNamed(name);
    } catch (err) {
      throw new Error(`Slurm does not answer (nothing was submitted): ${(err as Error).message}`);
    }
    let jobId = found.find((j) => LIVE.has(j.state))?.jobId ?? null;
    if (jobId === null) {
      fs.mkdirSync(path.join(shared, ".sbx-slurm"), { recursive: true });
      const out = await cluster.run("sbatch", [
        "--parsable",
        `--job-name=${name}`,
        ...cluster.placementArgs(),
        ...limitArgs(placement),
        "--nodes=1",
        "--ntasks=1",
        // A node failure ends the allocation (NODE_FAIL), said on its runs; never a silent new one.
        "--no-requeue",
        `--chdir=${placement.workspaceDir}`,
        `--output=${path.join(shared, ".sbx-slurm", "%x-%j.out")}`,
        "--wrap",
        "exec sleep infinity",
      ]);
      if (out.code !== 0)
        throw new Error(`Slurm did not take the allocation (nothing was submitted): ${oneLine(out.stderr)}`);
      jobId = out.stdout.trim().split(";")[0] ?? "";
    }
    a.jobId = jobId;
    for (;;) {
      const job = await cluster.job(jobId).catch(() => undefined);
      if (job === null) throw new Error(`Slurm no longer knows the allocation (job ${jobId})`);
      if (job !== undefined) {
        a.state = job.state;
        a.reason = job.reason;
        a.node = job.node;
        if (job.state === "RUNNING") {
          a.startedAt ??= new Date().toISOString();
          return jobId;
        }
        if (!LIVE.has(job.state)) {
          throw new Error(`the allocation (job ${jobId}) ended before it ran: ${job.state} ${job.reason ?? ""}`.trim());
        }
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}

/** The sandbox's limits as the allocation's request: memory as --mem, CPUs as --cpus-per-task. */
export function limitArgs(placement: SandboxPlacement): string[] {
  const { memory_bytes, cpus } = placement.limits;
  return [
    ...(memory_bytes === null ? [] : [`--mem=${Math.ceil(memory_bytes / 1024 ** 2)}M`]),
    ...(cpus === null ? [] : [`--cpus-per-task=${Math.ceil(cpus)}`]),
  ];
}
