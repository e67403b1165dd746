// A sandbox's resource limits (docs/drivers.md, "Limits"): what a sandbox asks for, the
// defaults, and — pure functions, table-tested in test/unit/limits.test.ts — the
// cgroup files that enforce them in either cgroup version, and how a cgroup's memory
// events are read. Where they are written is cgroups.ts; how a run joins them, the
// driver's (bwrap: its held leader joins the sandbox's cgroup before it goes on).

import type { LimitName, SandboxLimits } from "../../../protocol/types.js";

export type { LimitName, SandboxLimits };

/** Every limit, in the order they are shown. */
export const LIMIT_NAMES: readonly LimitName[] = ["memory", "pids", "cpu", "tmp", "workspace"];

/** The field of SandboxLimits each limit is. */
export const LIMIT_FIELD: Record<LimitName, keyof SandboxLimits> = {
  memory: "memory_bytes",
  pids: "pids",
  cpu: "cpus",
  tmp: "tmp_bytes",
  workspace: "workspace_bytes",
};

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/**
 * What a sandbox gets unless it asks otherwise: enough for a build or a test suite, not
 * enough for one runaway command to take the host down. No CPU limit (a sandbox may use
 * every core; `cpus` caps it) and no workspace limit (it needs a quota: see cgroups.ts).
 */
export const DEFAULT_LIMITS: SandboxLimits = {
  memory_bytes: 2 * GiB,
  pids: 1024,
  cpus: null,
  tmp_bytes: 256 * MiB,
  workspace_bytes: null,
};

/** A stored or requested set of limits over the defaults: a missing field is the default, null is "no limit". */
export function withDefaults(asked: Partial<SandboxLimits> | null | undefined, base = DEFAULT_LIMITS): SandboxLimits {
  const out = { ...base };
  for (const name of LIMIT_NAMES) {
    const field = LIMIT_FIELD[name];
    const value = asked?.[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

export type Controller = "memory" | "pids" | "cpu";
export type CgroupVersion = 1 | 2;

/** One cgroup file to write: `optional` ones are skipped where the kernel has no such file (no swap accounting). */
export interface CgroupSetting {
  controller: Controller;
  file: string;
  value: string;
  optional?: boolean;
}

/** The scheduler period a CPU limit is a share of (the kernel's default, as runc uses). */
export const CPU_PERIOD_US = 100_000;

/** Which controller enforces a limit that cgroups enforce; null for the others (tmpfs, disk). */
export function controllerOf(limit: LimitName): Controller | null {
  return limit === "memory" ? "memory" : limit === "pids" ? "pids" : limit === "cpu" ? "cpu" : null;
}

/**
 * The cgroup files (and values) that make a cgroup enforce `limits`, in the order they
 * are written. A null limit writes the "no limit" value, so that an update can lift one.
 * Memory counts swap too (no way around the limit by swapping; the swap file is optional).
 */
export function cgroupSettings(limits: SandboxLimits, version: CgroupVersion): CgroupSetting[] {
  const mem = limits.memory_bytes;
  const quota = limits.cpus === null ? null : Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US));
  if (version === 2) {
    return [
      { controller: "memory", file: "memory.max", value: mem === null ? "max" : String(mem) },
      { controller: "memory", file: "memory.swap.max", value: mem === null ? "max" : "0", optional: true },
      { controller: "pids", file: "pids.max", value: limits.pids === null ? "max" : String(limits.pids) },
      { controller: "cpu", file: "cpu.max", value: `${quota === null ? "max" : quota} ${CPU_PERIOD_US}` },
    ];
  }
  return [
    // memory.limit_in_bytes must stay at most memsw's: cgroups.ts writes them in the order that keeps it so.
    { controller: "memory", file: "memory.limit_in_bytes", value: mem === null ? "-1" : String(mem) },
    {
      controller: "memory",
      file: "memory.memsw.limit_in_bytes",
      value: mem === null ? "-1" : String(mem),
      optional: true,
    },
    { controller: "pids", file: "pids.max", value: limits.pids === null ? "max" : String(limits.pids) },
    { controller: "cpu", file: "cpu.cfs_period_us", value: String(CPU_PERIOD_US) },
    { controller: "cpu", file: "cpu.cfs_quota_us", value: quota === null ? "-1" : String(quota) },
  ];
}

/** What a cgroup says about memory trouble: OOM kills so far, and times the limit was hit. */
export interface MemoryEvents {
  oomKills: number;
  /** v2: `max` events (the limit was reached); v1: memory.failcnt. */
  hits: number;
}

/** A flat-keyed cgroup file ("key value" lines: memory.events, memory.oom_control, pids.events). */
export function parseKeyed(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [key, value] = line.trim().split(/\s+/);
    if (key && value !== undefined && /^\d+$/.test(value)) out.set(key, Number(value));
  }
  return out;
}

/** v2: memory.events. */
export function memoryEventsV2(eventsText: string): MemoryEvents {
  const keyed = parseKeyed(eventsText);
  return { oomKills: keyed.get("oom_kill") ?? 0, hits: keyed.get("max") ?? 0 };
}

/** v1: memory.oom_control (its oom_kill line, kernel 4.13 and later) and memory.failcnt. */
export function memoryEventsV1(oomControlText: string, failcntText: string): MemoryEvents {
  const keyed = parseKeyed(oomControlText);
  const hits = Number(failcntText.trim());
  return { oomKills: keyed.get("oom_kill") ?? 0, hits: Number.isFinite(hits) ? hits : 0 };
}
