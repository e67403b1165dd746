// What a sandbox uses now (docs/operations.md, "Sandbox stats"): its cgroup's counters
// (CPU time, memory now and at its peak, processes), /tmp as its init sees it, the
// workspace on disk, and its network interfaces' byte counts from its own network
// namespace (/proc/<init>/net/dev). Every figure that cannot be had is null, with why.

import fs from "node:fs";
import path from "node:path";
import type { NetworkMode, SandboxLimits, SandboxStats } from "../../protocol/types.js";
import { type MeasuredPlace, parseKeyed } from "../drivers/index.js";
import { diskUsage } from "./workspace-dirs.js";

export interface StatsSource {
  sandboxId: string;
  name: string;
  /** The sandbox's environment: running with its init's host pid, or not. */
  state: "running" | "starting" | "paused" | "stopped" | "none";
  initPid: number | null;
  limits: SandboxLimits;
  network: NetworkMode;
  workspaceDir: string;
  /** Where its cgroup is per measured controller, or why there is none. */
  places: Record<"memory" | "pids" | "cpuacct", MeasuredPlace | { problem: string }>;
  now: Date;
}

function read(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function num(text: string | null): number | null {
  const t = text?.trim();
  return t !== undefined && /^\d+$/.test(t) ? Number(t) : null;
}

/** Bytes received and sent on every interface but loopback, from a /proc/net/dev text (pure). */
export function netDevBytes(text: string): { rx: number; tx: number } {
  let rx = 0;
  let tx = 0;
  for (const line of text.split("\n").slice(2)) {
    const [name, rest] = line.split(":");
    if (rest === undefined || name?.trim() === "lo") continue;
    const f = rest.trim().split(/\s+/).map(Number);
    rx += f[0] ?? 0;
    tx += f[8] ?? 0;
  }
  return { rx, tx };
}

/** The sandbox's stats now (one sample: CPU % is two samples' difference, the client's). */
export function sandboxStats(src: StatsSource): SandboxStats {
  const unavailable: Record<string, string> = {};
  const running = src.state === "running" && src.initPid !== null;
  const stopped = "its environment is not running";
  const cgroupFile = (c: "memory" | "pids" | "cpuacct", v1: string, v2: string): string | null => {
    const place = src.places[c];
    if ("problem" in place) return null;
    return read(path.join(place.dir, place.version === 1 ? v1 : v2));
  };
  const why = (c: "memory" | "pids" | "cpuacct") => {
    const place = src.places[c];
    return "problem" in place ? place.problem : running ? "its cgroup cannot be read" : stopped;
  };
  // CPU time so far (the sandbox's cgroup counts every process of it, the init's too).
  let cpu: number | null = null;
  const cpuPlace = src.places.cpuacct;
  if (!("problem" in cpuPlace)) {
    cpu =
      cpuPlace.version === 1
        ? (() => {
            const ns = num(cgroupFile("cpuacct", "cpuacct.usage", "cpuacct.usage"));
            return ns === null ? null : Math.round(ns / 1000);
          })()
        : (parseKeyed(cgroupFile("cpuacct", "", "cpu.stat") ?? "").get("usage_usec") ?? null);
  }
  if (cpu === null) unavailable.cpu = why("cpuacct");
  const memory = num(cgroupFile("memory", "memory.usage_in_bytes", "memory.current"));
  const peak = num(cgroupFile("memory", "memory.max_usage_in_bytes", "memory.peak"));
  if (memory === null) unavailable.memory = why("memory");
  if (peak === null && memory !== null) unavailable.memory_peak = "memory.peak needs Linux 5.19 or later";
  const pids = num(cgroupFile("pids", "pids.current", "pids.current"));
  if (pids === null) unavailable.pids = why("pids");
  // /tmp: the tmpfs in its own mount namespace, seen through its init.
  let tmp: number | null = null;
  if (running) {
    try {
      const st = fs.statfsSync(`/proc/${src.initPid}/root/tmp`);
      tmp = (st.blocks - st.bfree) * st.bsize;
    } catch (err) {
      unavailable.tmp = `its /tmp cannot be looked at: ${(err as NodeJS.ErrnoException).code ?? err}`;
    }
  } else unavailable.tmp = `${stopped} (its /tmp is gone with it)`;
  const workspace = diskUsage(src.workspaceDir).bytes;
  let rx: number | null = null;
  let tx: number | null = null;
  if (src.network === "none") unavailable.network = "it has no network (only its own loopback)";
  else if (src.network === "host")
    unavailable.network = "it shares the host's network: the host's counters are not its own";
  else if (!running) unavailable.network = stopped;
  else {
    const dev = read(`/proc/${src.initPid}/net/dev`);
    if (dev === null) unavailable.network = "its network namespace's counters cannot be read";
    else ({ rx, tx } = netDevBytes(dev));
  }
  const versions = (["cpuacct", "memory", "pids"] as const)
    .map((c) => src.places[c])
    .filter((p): p is MeasuredPlace => !("problem" in p))
    .map((p) => p.version);
  return {
    sandbox_id: src.sandboxId,
    name: src.name,
    state: src.state,
    sampled_at: src.now.toISOString(),
    cpu_usage_us: cpu,
    cpus_limit: src.limits.cpus,
    memory_bytes: memory,
    memory_peak_bytes: peak,
    memory_limit_bytes: src.limits.memory_bytes,
    pids,
    pids_limit: src.limits.pids,
    tmp_bytes: tmp,
    tmp_limit_bytes: src.limits.tmp_bytes,
    workspace_bytes: workspace,
    net_rx_bytes: rx,
    net_tx_bytes: tx,
    unavailable,
    measured_by: versions.length === 0 ? "no cgroup" : `its cgroup (v${[...new Set(versions)].join(", v")}) and /proc`,
  };
}
