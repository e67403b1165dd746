// What a command used, read from its cgroup's files (src/backend/drivers/limits/usage.ts,
// readUsage): cgroup v1 and v2 file by file, the kernel's user/system split, which limit
// an OOM kill or a refused fork was, and a figure that cannot be had said as null with
// its reason, never a zero.

import { describe, expect, it } from "vitest";
import { type CgroupReader, readUsage, splitAsKernel } from "../../src/backend/drivers/limits/usage.js";

function reader(own: Record<string, string>, sandbox: Record<string, string> = {}): CgroupReader {
  return (_c, where, file) => (where === "own" ? own : sandbox)[file] ?? null;
}

describe("readUsage", () => {
  it("cgroup v1: cpuacct's exact total split as the kernel splits it, max_usage_in_bytes, oom_kill, pids.events", () => {
    const usage = readUsage(
      reader(
        {
          "cpuacct.usage": "3000000000\n",
          "cpuacct.usage_user": "2000000000\n",
          "cpuacct.usage_sys": "1000000000\n",
          "memory.max_usage_in_bytes": "209715200\n",
          "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
          "pids.events": "max 0\n",
        },
        { "memory.failcnt": "0\n" },
      ),
      { cpuacct: 1, memory: 1, pids: 1 },
      {},
      { memoryHits: 0, pidsRefused: 0 },
    );
    expect(usage).toEqual({
      cpu_user_us: 2_000_000,
      cpu_system_us: 1_000_000,
      memory_peak_bytes: 209715200,
      oom_kills: 0,
      limits_hit: [],
      unavailable: {},
      measured_by: "a cgroup of its own: cgroup v1 (cpuacct, memory, pids)",
    });
  });

  it("cgroup v2: cpu.stat, memory.peak, memory.events; a kill at the sandbox's limit is memory, one without is the host's", () => {
    const own = {
      "cpu.stat": "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n",
      "memory.peak": "1048576\n",
      "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\n",
      "pids.events": "max 0\n",
    };
    const versions = { cpuacct: 2, memory: 2, pids: 2 } as const;
    const atLimit = readUsage(
      reader(own, { "memory.events": "max 4\noom 1\n", "pids.events": "max 0\n" }),
      versions,
      {},
      { memoryHits: 0, pidsRefused: 0 },
    );
    expect(atLimit).toMatchObject({ cpu_user_us: 1000, cpu_system_us: 500, memory_peak_bytes: 1048576, oom_kills: 1 });
    expect(atLimit.limits_hit).toEqual(["memory"]);
    const host = readUsage(
      reader(own, { "memory.events": "max 4\noom 1\n", "pids.events": "max 0\n" }),
      versions,
      {},
      { memoryHits: 5, pidsRefused: 0 },
    );
    expect(host.limits_hit).toEqual(["host_memory"]);
    // v2 (Linux 6.12 on) counts a refused fork where the limit is: the sandbox's, since the start.
    const forks = readUsage(
      reader(own, { "memory.events": "max 4\noom 1\n", "pids.events": "max 3\n" }),
      versions,
      {},
      { memoryHits: 5, pidsRefused: 1 },
    );
    expect(forks.limits_hit).toEqual(["host_memory", "pids"]);
  });

  it("what cannot be had is null with the reason: no cgroup, no memory.peak (before Linux 5.19)", () => {
    const usage = readUsage(
      reader({ "cpu.stat": "usage_usec 10\nuser_usec 7\nsystem_usec 3\n", "memory.events": "oom_kill 0\n" }),
      { cpuacct: 2, memory: 2 },
      { pids: "the pids controller is not delegated to the daemon's cgroup" },
      { memoryHits: 0, pidsRefused: null },
    );
    expect(usage.memory_peak_bytes).toBeNull();
    expect(usage.unavailable).toEqual({
      memory: "memory.peak cannot be read (it needs Linux 5.19 or later)",
      pids: "the pids controller is not delegated to the daemon's cgroup",
    });
    expect(usage.cpu_user_us).toBe(7);
  });

  it("splits the exact total by ticks, all to one side when the other had none", () => {
    expect(splitAsKernel(1000, 3, 1)).toEqual([750, 250]);
    expect(splitAsKernel(1000, 0, 0)).toEqual([1000, 0]);
    expect(splitAsKernel(1000, 0, 5)).toEqual([0, 1000]);
  });
});
