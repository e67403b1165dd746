// The backend's limits mechanism (docs/drivers.md, "Limits"): for each limit, whether
// and how this machine enforces it — cgroups (cgroups.ts) for memory, pids and CPU,
// rlimits where a cgroup controller is missing (per process, weaker, said so), bwrap's
// tmpfs size for /tmp, a file system of its own for the workspace — said honestly for
// /health, `daemon status` and `sandbox show`; and the one hook a driver calls: join(),
// which puts a held leader into its sandbox's cgroup before it starts anything, and
// launch(), which starts the leader under the rlimits that stand in for missing controllers. A driver whose sandbox is one live environment joins its leader
// once, when the environment starts, and asks watch() for each command it runs in it.

import { randomBytes } from "node:crypto";
import type { Isolation, LimitName, LimitStatus, SandboxLimits } from "../../../protocol/types.js";
import type { CgroupLimits, CgroupMembership } from "./cgroups.js";
import { controllerOf, DEFAULT_LIMITS, LIMIT_FIELD, LIMIT_NAMES } from "./spec.js";
import { CommandCgroup, type CommandMeasure, type MeasuredPlaces, notMeasured } from "./usage.js";

/** What a run got from the limits: how to tell, at its end, that memory ended it. */
export interface RunLimits {
  oomKilled(): boolean;
  /** The run is over (its sandbox's cgroup goes when nothing else is in it). */
  done(): void;
}

const NO_RUN_LIMITS: RunLimits = { oomKilled: () => false, done: () => {} };

const CGROUP_FILE: Record<"memory" | "pids" | "cpu", Record<1 | 2, string>> = {
  memory: { 1: "memory.limit_in_bytes", 2: "memory.max" },
  pids: { 1: "pids.max", 2: "pids.max" },
  cpu: { 1: "cpu.cfs_quota_us", 2: "cpu.max" },
};

export interface LimiterOptions {
  /** The cgroups of this backend's sandboxes, or why there are none (not root, no cgroup file system). */
  cgroups: CgroupLimits | { problem: string };
  /**
   * util-linux's prlimit, which sets a held leader's rlimits where a cgroup controller
   * is missing; null: not installed (no fallback).
   */
  prlimit: string | null;
  /** Whether each sandbox's commands run as a host uid of its own (a root daemon): RLIMIT_NPROC then bounds one sandbox. */
  ownUids: boolean;
  /** Whether bwrap here can size a tmpfs (`--size`, bubblewrap 0.5 and later). */
  tmpSize: () => { supported: boolean; reason: string | null };
  /** Workspaces of their own size (workspace-disk.ts): `problem` says why there are none here. */
  workspace: { problem: string | null };
}

export class Limiter {
  constructor(private readonly opts: LimiterOptions) {}

  /** Each limit for the backend: its default, and whether and how bwrap sandboxes get it here. */
  status(): LimitStatus[] {
    return this.describe(DEFAULT_LIMITS, "bwrap", true);
  }

  /** Each of a sandbox's limits: whether and how it is enforced. */
  sandboxStatus(limits: SandboxLimits, isolation: Isolation): LimitStatus[] {
    return this.describe(limits, isolation, false);
  }

  /** Why a limit asked for cannot be enforced on this backend, or null (it can, or it was not asked). */
  refusal(limits: SandboxLimits, isolation: Isolation): { limit: LimitName; reason: string } | null {
    for (const s of this.describe(limits, isolation, false)) {
      if (s.value !== null && !s.enforced && s.limit === "workspace") return { limit: s.limit, reason: s.reason ?? "" };
    }
    return null;
  }

  /**
   * A bwrap run's leader (held: nothing of it runs yet) joins its sandbox's cgroup.
   * Throws saying why when the cgroup cannot be made or joined: a run never starts
   * with fewer limits than `sandbox show` says.
   */
  join(sandboxId: string, limits: SandboxLimits, pid: number): RunLimits {
    const cgroups = this.opts.cgroups;
    if ("problem" in cgroups) return NO_RUN_LIMITS;
    const membership: CgroupMembership = cgroups.attach(sandboxId, limits, pid);
    return { oomKilled: () => membership.oomKilledSince(), done: () => membership.leave() };
  }

  /**
   * A command started in a sandbox whose leader joined already (a live environment):
   * whether memory ended it is read against the OOM kills counted from now.
   */
  watch(sandboxId: string): RunLimits {
    const cgroups = this.opts.cgroups;
    if ("problem" in cgroups) return NO_RUN_LIMITS;
    const baseline = cgroups.memoryEvents(sandboxId)?.oomKills ?? 0;
    return { oomKilled: () => (cgroups.memoryEvents(sandboxId)?.oomKills ?? 0) > baseline, done: () => {} };
  }

  /**
   * How to start a leader with the rlimits that stand in for missing cgroup controllers:
   * under util-linux's prlimit, which lowers its own limits and execs the leader in
   * place (same pid; every process the leader starts inherits them). Set by the process
   * itself, so no capability is needed (a root without CAP_SYS_RESOURCE cannot set
   * another uid's). Unchanged when no rlimit is needed.
   */
  launch(limits: SandboxLimits, leader: { file: string; args: string[] }): { file: string; args: string[] } {
    const args: string[] = [];
    if (limits.memory_bytes !== null && this.rlimitFor("memory") !== null) {
      args.push(`--data=${limits.memory_bytes}:${limits.memory_bytes}`);
    }
    if (limits.pids !== null && this.rlimitFor("pids") !== null) args.push(`--nproc=${limits.pids}:${limits.pids}`);
    if (args.length === 0 || this.opts.prlimit === null) return leader;
    return { file: this.opts.prlimit, args: [...args, "--", leader.file, ...leader.args] };
  }

  /** The rlimit that stands in for a controller missing here, with what it bounds; null when a cgroup does it or none can. */
  private rlimitFor(controller: "memory" | "pids" | "cpu"): string | null {
    const cgroups = this.opts.cgroups;
    const missing = "problem" in cgroups ? cgroups.problem : "problem" in cgroups.controller(controller);
    if (missing === false || this.opts.prlimit === null) return null;
    if (controller === "memory") return "RLIMIT_DATA, per process";
    if (controller === "pids" && this.opts.ownUids) return "RLIMIT_NPROC of the sandbox's own uid";
    return null;
  }

  /**
   * Why a sandbox of this isolation cannot be paused here, or null when it can: its
   * processes are in a freezer cgroup (cgroups.ts, freezer.ts).
   */
  pauseProblem(isolation: Isolation): string | null {
    if (isolation === "none")
      return "isolation none runs commands as plain processes of the daemon's, in no cgroup of the sandbox's";
    const cgroups = this.opts.cgroups;
    if ("problem" in cgroups) return `no cgroup freezer: ${cgroups.problem}`;
    const st = cgroups.controller("freezer");
    return "problem" in st ? `no cgroup freezer: ${st.problem}` : null;
  }

  /** How a pause is done here (for sandbox show and the docs' words), or null where it cannot be. */
  pauseMechanism(): string | null {
    const cgroups = this.opts.cgroups;
    if ("problem" in cgroups) return null;
    const st = cgroups.controller("freezer");
    if ("problem" in st) return null;
    return st.version === 1 ? "cgroup v1 freezer (freezer.state)" : "cgroup v2 freezer (cgroup.freeze)";
  }

  /** Freezes the sandbox's processes; resolves once they all stopped (throws saying why not). */
  freeze(sandboxId: string): Promise<void> {
    const cgroups = this.opts.cgroups;
    if ("problem" in cgroups) return Promise.reject(new Error(cgroups.problem));
    return cgroups.freeze(sandboxId);
  }

  /** Thaws the sandbox's processes (nothing when they are not frozen). */
  thaw(sandboxId: string): void {
    const cgroups = this.opts.cgroups;
    if (!("problem" in cgroups)) cgroups.thaw(sandboxId);
  }

  /** Whether the sandbox's processes are frozen now. */
  frozen(sandboxId: string): boolean {
    const cgroups = this.opts.cgroups;
    return !("problem" in cgroups) && cgroups.frozen(sandboxId);
  }

  /** The backend stops: every paused sandbox is thawed, so that its runs can be ended. */
  thawAll(): void {
    const cgroups = this.opts.cgroups;
    if (!("problem" in cgroups)) for (const id of cgroups.sandboxes()) cgroups.thaw(id);
  }

  /**
   * How a command about to start in a live sandbox is measured (usage.ts): a cgroup of its
   * own below the sandbox's, named `cmd-<run>`; or, without cgroups, nothing, said why.
   */
  measure(sandboxId: string, run: string): CommandMeasure {
    const cgroups = this.opts.cgroups;
    if ("problem" in cgroups) return notMeasured(`no cgroups for sandboxes here: ${cgroups.problem}`);
    return new CommandCgroup(cgroups.measuredPlaces(sandboxId), `cmd-${run}-${randomBytes(4).toString("hex")}`);
  }

  /** Where a sandbox's cgroup is per measured controller (its stats), or why there is none. */
  measuredPlaces(sandboxId: string): MeasuredPlaces {
    const cgroups = this.opts.cgroups;
    if (!("problem" in cgroups)) return cgroups.measuredPlaces(sandboxId);
    const none = { problem: `no cgroups for sandboxes here: ${cgroups.problem}` };
    return { memory: none, pids: none, cpuacct: none };
  }

  /** A sandbox was removed: its cgroup goes, with anything left in it. */
  release(sandboxId: string): void {
    const cgroups = this.opts.cgroups;
    if (!("problem" in cgroups)) cgroups.remove(sandboxId);
  }

  /** Applies changed limits to a sandbox's cgroup now, when it has one (the running commands get them). */
  update(sandboxId: string, limits: SandboxLimits): void {
    const cgroups = this.opts.cgroups;
    if ("problem" in cgroups) return;
    if (cgroups.processes(sandboxId).length > 0) cgroups.apply(sandboxId, limits);
  }

  /** At start-up, once the runs an earlier daemon left are settled: the cgroups it left (cgroups.ts). */
  recover(exists: (sandboxId: string) => boolean): { removed: string[]; killed: number } {
    const cgroups = this.opts.cgroups;
    return "problem" in cgroups ? { removed: [], killed: 0 } : cgroups.recover(exists);
  }

  close(): void {
    const cgroups = this.opts.cgroups;
    if (!("problem" in cgroups)) cgroups.close();
  }

  private describe(limits: SandboxLimits, isolation: Isolation, defaults: boolean): LimitStatus[] {
    return LIMIT_NAMES.map((limit) => {
      const value = limits[LIMIT_FIELD[limit]];
      const mechanism = this.mechanism(limit, isolation);
      if (value === null) {
        // No limit: why none could be (when that is so), else that none was asked for.
        const reason = mechanism.how === null ? mechanism.reason : defaults ? "no limit by default" : "no limit set";
        return { limit, value, enforced: false, how: mechanism.how, reason };
      }
      return { limit, value, enforced: mechanism.how !== null, how: mechanism.how, reason: mechanism.reason };
    });
  }

  /** How a limit is enforced for a sandbox of this isolation, or why it is not. */
  private mechanism(limit: LimitName, isolation: Isolation): { how: string | null; reason: string | null } {
    if (isolation === "none") {
      return { how: null, reason: "isolation none runs commands as plain processes of the daemon's: no limits" };
    }
    if (isolation === "slurm") return slurmMechanism(limit);
    const controller = controllerOf(limit);
    if (controller !== null) {
      const cgroups = this.opts.cgroups;
      const st = "problem" in cgroups ? cgroups : cgroups.controller(controller);
      if ("problem" in st) {
        // No cgroup: an rlimit where one bounds something, said for what it is.
        const rlimit = this.rlimitFor(controller);
        if (rlimit !== null) {
          const what =
            controller === "memory"
              ? "a process past it gets ENOMEM; the sandbox as a whole is not bounded"
              : "a fork past it fails with EAGAIN";
          return { how: `rlimit ${rlimit} (no cgroup: ${st.problem}): ${what}`, reason: null };
        }
        const why =
          controller === "cpu"
            ? "; no rlimit shares CPU time"
            : controller === "pids" && this.opts.prlimit !== null
              ? "; RLIMIT_NPROC would count every process of the daemon's user, not the sandbox's"
              : this.opts.prlimit === null
                ? "; prlimit (util-linux) is not installed for an rlimit instead"
                : "";
        return { how: null, reason: `${st.problem}${why}` };
      }
      return {
        how: `cgroup v${st.version} ${controller} controller (${CGROUP_FILE[controller][st.version]})`,
        reason: null,
      };
    }
    if (limit === "tmp") {
      const tmp = this.opts.tmpSize();
      return tmp.supported
        ? {
            how: "tmpfs size (bwrap --size) of /tmp, /var/tmp and /dev/shm, each: a write past it fails with ENOSPC; /dev is read-only",
            reason: null,
          }
        : { how: null, reason: tmp.reason };
    }
    const problem = this.opts.workspace.problem;
    return problem === null
      ? {
          how: "a file system of its own: an ext4 image whose usable space is that size, loop-mounted at the workspace (a write past it fails with ENOSPC; set at create)",
          reason: null,
        }
      : { how: null, reason: problem };
  }
}

/**
 * A limit of a sandbox on Slurm: memory and CPUs are the allocation's request (--mem,
 * --cpus-per-task), which the scheduler reserves and the node confines only where the
 * cluster confines jobs (TaskPlugin task/cgroup); the rest are not carried to a node yet.
 */
function slurmMechanism(limit: LimitName): { how: string | null; reason: string | null } {
  if (limit === "memory" || limit === "cpu") {
    const flag = limit === "memory" ? "--mem" : "--cpus-per-task (rounded up to whole CPUs)";
    return {
      how: `Slurm allocation ${flag}: reserved by the scheduler; confined on the node where the cluster uses task/cgroup`,
      reason: null,
    };
  }
  return { how: null, reason: `the ${limit} limit is not carried to a Slurm allocation yet` };
}
