// The limits' pure parts (src/backend/drivers/limits/spec.ts, cgroups.ts' planning),
// and cgroup v2's file-level logic against a directory tree that plays the cgroup file
// system (this machine's controllers are v1; the v1 path runs for real in
// test/backend/limits.test.ts).

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { baseName, CgroupLimits, planCgroups } from "../../src/backend/drivers/limits/cgroups.js";
import { Limiter } from "../../src/backend/drivers/limits/limiter.js";
import {
  cgroupSettings,
  DEFAULT_LIMITS,
  memoryEventsV1,
  memoryEventsV2,
  withDefaults,
} from "../../src/backend/drivers/limits/spec.js";
import { formatSize, parseSize } from "../../src/common/sizes.js";
import { checkSandboxLimits } from "../../src/protocol/validate.js";
import { tempDir } from "../support/temp.js";

const MiB = 1024 * 1024;

describe("limit values", () => {
  it("a missing field is the default, null lifts it", () => {
    expect(withDefaults({})).toEqual(DEFAULT_LIMITS);
    expect(withDefaults(null)).toEqual(DEFAULT_LIMITS);
    expect(withDefaults({ memory_bytes: null, pids: 64 })).toEqual({ ...DEFAULT_LIMITS, memory_bytes: null, pids: 64 });
  });

  it.each([
    [{ memory_bytes: 128 * MiB, pids: 64, cpus: 1.5, tmp_bytes: MiB, workspace_bytes: null }, null],
    [{ memory_bytes: 1 }, "limits.memory_bytes"],
    [{ pids: 7 }, "limits.pids"],
    [{ pids: 8.5 }, "limits.pids"],
    [{ cpus: 0 }, "limits.cpus"],
    [{ cpus: "1" }, "limits.cpus"],
    [{ tmp_bytes: -1 }, "limits.tmp_bytes"],
    [{ swap: 1 }, "limits.swap"],
    [[], "limits"],
  ])("checkSandboxLimits(%j) → %s", (asked, field) => {
    expect(checkSandboxLimits(asked)?.field ?? null).toBe(field);
  });

  it.each([
    ["512m", 512 * MiB],
    ["2GiB", 2 * 1024 * MiB],
    ["1.5g", 1.5 * 1024 * MiB],
    ["64k", 64 * 1024],
    ["100", 100],
    ["12x", null],
    ["", null],
    ["-1m", null],
  ])("parseSize(%s) = %s", (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  it("formats sizes as people write them", () => {
    expect(formatSize(128 * MiB)).toBe("128 MiB");
    expect(formatSize(2 * 1024 * MiB)).toBe("2 GiB");
    expect(formatSize(1536 * MiB)).toBe("1.5 GiB");
    expect(formatSize(100)).toBe("100 B");
  });
});

describe("cgroup settings", () => {
  const limits = { memory_bytes: 128 * MiB, pids: 64, cpus: 1.5, tmp_bytes: MiB, workspace_bytes: null };
  it("v2: memory.max (no swap), pids.max, cpu.max as quota and period", () => {
    expect(cgroupSettings(limits, 2)).toEqual([
      { controller: "memory", file: "memory.max", value: String(128 * MiB) },
      { controller: "memory", file: "memory.swap.max", value: "0", optional: true },
      { controller: "pids", file: "pids.max", value: "64" },
      { controller: "cpu", file: "cpu.max", value: "150000 100000" },
    ]);
  });
  it("v1: memory (and memsw), pids.max, the CFS quota", () => {
    expect(cgroupSettings(limits, 1)).toEqual([
      { controller: "memory", file: "memory.limit_in_bytes", value: String(128 * MiB) },
      { controller: "memory", file: "memory.memsw.limit_in_bytes", value: String(128 * MiB), optional: true },
      { controller: "pids", file: "pids.max", value: "64" },
      { controller: "cpu", file: "cpu.cfs_period_us", value: "100000" },
      { controller: "cpu", file: "cpu.cfs_quota_us", value: "150000" },
    ]);
  });
  it("no limit writes the kernel's 'none', so that an update lifts it", () => {
    const none = { memory_bytes: null, pids: null, cpus: null, tmp_bytes: null, workspace_bytes: null };
    expect(cgroupSettings(none, 2).map((s) => s.value)).toEqual(["max", "max", "max", "max 100000"]);
    expect(cgroupSettings(none, 1).map((s) => s.value)).toEqual(["-1", "-1", "max", "100000", "-1"]);
  });
  it("reads OOM kills: v2 memory.events, v1 memory.oom_control and failcnt", () => {
    expect(memoryEventsV2("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n")).toEqual({
      oomKills: 1,
      hits: 12,
    });
    expect(memoryEventsV1("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "40\n")).toEqual({ oomKills: 3, hits: 40 });
    expect(memoryEventsV1("oom_kill_disable 0\nunder_oom 0\n", "")).toEqual({ oomKills: 0, hits: 0 });
  });
});

const HYBRID_MOUNTINFO = [
  "30 25 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755",
  "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw",
  "35 30 0:31 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,memory",
  "36 30 0:32 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,pids",
  "37 30 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup rw,cpu,cpuacct",
].join("\n");
const HYBRID_SELF =
  "12:pids:/user.slice\n4:memory:/user.slice/sbx.service\n3:cpu,cpuacct:/\n0::/user.slice/sbx.service\n";

describe("where each controller is (planCgroups)", () => {
  it("hybrid: each controller in its v1 hierarchy, at the daemon's own cgroup there", () => {
    const plan = planCgroups(HYBRID_MOUNTINFO, HYBRID_SELF, () => []);
    expect(plan.memory).toEqual({ version: 1, ownDir: "/sys/fs/cgroup/memory/user.slice/sbx.service" });
    expect(plan.pids).toEqual({ version: 1, ownDir: "/sys/fs/cgroup/pids/user.slice" });
    expect(plan.cpu).toEqual({ version: 1, ownDir: "/sys/fs/cgroup/cpu,cpuacct" });
  });

  it("v2 only: the controllers the daemon's cgroup offers; the others said missing", () => {
    const mountinfo = "24 18 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";
    const plan = planCgroups(mountinfo, "0::/system.slice/sbx.service\n", (dir) => {
      expect(dir).toBe("/sys/fs/cgroup/system.slice/sbx.service");
      return ["memory", "pids"];
    });
    expect(plan.memory).toEqual({ version: 2, ownDir: "/sys/fs/cgroup/system.slice/sbx.service" });
    expect(plan.pids).toEqual({ version: 2, ownDir: "/sys/fs/cgroup/system.slice/sbx.service" });
    expect(plan.cpu).toMatchObject({ missing: expect.stringContaining("cpu controller is not delegated") });
  });

  it("a container's cgroup namespace (mount root /) and no cgroup file system at all", () => {
    const mountinfo = "700 690 0:40 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw";
    expect(planCgroups(mountinfo, "0::/\n", () => ["cpu", "memory", "pids"]).memory).toEqual({
      version: 2,
      ownDir: "/sys/fs/cgroup",
    });
    expect(planCgroups("", "", () => null).memory).toEqual({
      missing: "no cgroup hierarchy has the memory controller",
    });
  });

  it("names a daemon's cgroups after its data directory: two daemons never share one", () => {
    expect(baseName("/a/data")).toMatch(/^sbx-[0-9a-f]{12}$/);
    expect(baseName("/a/data")).toBe(baseName("/a/./data"));
    expect(baseName("/a/data")).not.toBe(baseName("/b/data"));
  });
});

/** A Limiter over these cgroups: /tmp sizable, no workspace quota. */
function testLimiter(cgroups: CgroupLimits | { problem: string }, prlimit: string | null, ownUids: boolean): Limiter {
  return new Limiter({
    cgroups,
    tmpSize: () => ({ supported: true, reason: null }),
    workspace: { problem: "no quota" },
    prlimit,
    ownUids,
  });
}

/** A directory tree shaped as a cgroup v2 file system where the daemon's cgroup is `own`. */
function fakeV2(root: string, controllers: string[]): { mountinfo: string; own: string } {
  const own = path.join(root, "daemon.service");
  fs.mkdirSync(own, { recursive: true });
  fs.writeFileSync(path.join(own, "cgroup.controllers"), `${controllers.join(" ")}\n`);
  fs.writeFileSync(path.join(own, "cgroup.subtree_control"), "");
  fs.writeFileSync(path.join(own, "cgroup.procs"), "");
  return { mountinfo: `40 30 0:50 / ${root} rw - cgroup2 cgroup2 rw`, own };
}

describe("cgroup v2, file by file", () => {
  it("enables the controllers down to the sandbox, writes its limits, moves the leader in, reads OOM kills", () => {
    const root = tempDir("sbx-cgv2-");
    const { mountinfo, own } = fakeV2(root, ["cpu", "memory", "pids"]);
    const dataDir = path.join(root, "data");
    const base = path.join(own, baseName(dataDir));
    // What the kernel makes in every new cgroup.
    fs.mkdirSync(base);
    fs.writeFileSync(path.join(base, "cgroup.procs"), "");
    const cgroups = new CgroupLimits({ dataDir, mountinfo, selfCgroup: "0::/daemon.service\n" });
    for (const c of ["memory", "pids", "cpu"] as const) expect(cgroups.controller(c)).toEqual({ version: 2, base });
    // Each controller enabled for the children of the daemon's cgroup and of the base.
    expect(fs.readFileSync(path.join(own, "cgroup.subtree_control"), "utf8")).toBe("+cpu");
    const limits = { memory_bytes: 128 * MiB, pids: 64, cpus: 0.5, tmp_bytes: MiB, workspace_bytes: null };
    const sandbox = path.join(base, "sbx_a");
    fs.mkdirSync(sandbox);
    fs.writeFileSync(path.join(sandbox, "memory.swap.max"), "max");
    const member = cgroups.attach("sbx_a", limits, 4242);
    const read = (f: string) => fs.readFileSync(path.join(sandbox, f), "utf8");
    expect(read("memory.max")).toBe(String(128 * MiB));
    expect(read("memory.swap.max")).toBe("0");
    expect(read("pids.max")).toBe("64");
    expect(read("cpu.max")).toBe("50000 100000");
    // The leader in the sandbox's leaf (a v2 cgroup that hands controllers down to its
    // commands' cgroups holds no process itself), memory and pids handed down.
    expect(read("init/cgroup.procs")).toBe("4242\n");
    expect(read("cgroup.subtree_control")).toBe("+pids");
    // No memory.events yet: nothing known; then the kernel counts a kill.
    expect(member.oomKilledSince()).toBe(false);
    fs.writeFileSync(path.join(sandbox, "memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
    expect(member.oomKilledSince()).toBe(true);
    expect(cgroups.memoryEvents("sbx_a")).toEqual({ oomKills: 1, hits: 3 });
    // A live environment joined once: each command's OOM kills are counted from its own start.
    const limiter = testLimiter(cgroups, null, true);
    const command = limiter.watch("sbx_a");
    expect(command.oomKilled()).toBe(false);
    fs.writeFileSync(path.join(sandbox, "memory.events"), "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n");
    expect(command.oomKilled()).toBe(true);
  });

  it("says why when a controller is not delegated, and when the daemon's cgroup has processes (EBUSY in the kernel)", () => {
    const root = tempDir("sbx-cgv2-");
    const { mountinfo } = fakeV2(root, ["memory"]);
    const cgroups = new CgroupLimits({ dataDir: path.join(root, "d"), mountinfo, selfCgroup: "0::/daemon.service\n" });
    expect(cgroups.controller("pids")).toMatchObject({
      problem: expect.stringContaining("the pids controller is not delegated to the daemon's cgroup"),
    });
    // The base is no cgroup here (no cgroup.procs appears in a plain directory): said, not used.
    expect(cgroups.controller("memory")).toMatchObject({ problem: expect.stringContaining("is not a cgroup") });
    const limiter = testLimiter(cgroups, null, true);
    const status = Object.fromEntries(limiter.sandboxStatus(DEFAULT_LIMITS, "bwrap").map((s) => [s.limit, s]));
    expect(status.memory!.enforced).toBe(false);
    expect(status.pids!.reason).toContain("not delegated");
    expect(status.tmp!.enforced).toBe(true);
    expect(status.workspace).toMatchObject({ enforced: false, reason: "no quota" });
    // Isolation none: nothing is enforced, said.
    const none = limiter.sandboxStatus(DEFAULT_LIMITS, "none");
    expect(none.every((s) => !s.enforced)).toBe(true);
    expect(none[0]!.reason).toContain("isolation none");
  });
});

describe("rlimits where a cgroup controller is missing", () => {
  const limiter = (ownUids: boolean, prlimit: string | null) =>
    testLimiter({ problem: "no cgroup hierarchy has the memory controller" }, prlimit, ownUids);
  const byLimit = (l: Limiter) => Object.fromEntries(l.status().map((s) => [s.limit, s]));

  it("memory: RLIMIT_DATA per process, said as weaker than a cgroup", () => {
    const memory = byLimit(limiter(false, "/usr/bin/prlimit")).memory!;
    expect(memory.enforced).toBe(true);
    expect(memory.how).toBe(
      "rlimit RLIMIT_DATA, per process (no cgroup: no cgroup hierarchy has the memory controller): a process past it gets ENOMEM; the sandbox as a whole is not bounded",
    );
  });

  it("starts the leader under prlimit, which execs it in place; unchanged where cgroups do it", () => {
    const leader = { file: "/usr/bin/bwrap", args: ["--args", "3", "--", "sh"] };
    expect(limiter(true, "/usr/bin/prlimit").launch(DEFAULT_LIMITS, leader)).toEqual({
      file: "/usr/bin/prlimit",
      args: [
        `--data=${DEFAULT_LIMITS.memory_bytes}:${DEFAULT_LIMITS.memory_bytes}`,
        "--nproc=1024:1024",
        "--",
        "/usr/bin/bwrap",
        "--args",
        "3",
        "--",
        "sh",
      ],
    });
    expect(limiter(false, "/usr/bin/prlimit").launch({ ...DEFAULT_LIMITS, memory_bytes: null }, leader)).toEqual(
      leader,
    );
    expect(limiter(true, null).launch(DEFAULT_LIMITS, leader)).toEqual(leader);
  });

  it("pids: RLIMIT_NPROC only where each sandbox has a uid of its own; CPU never", () => {
    expect(byLimit(limiter(true, "/usr/bin/prlimit")).pids!.how).toContain("RLIMIT_NPROC of the sandbox's own uid");
    const asUser = byLimit(limiter(false, "/usr/bin/prlimit"));
    expect(asUser.pids).toMatchObject({ enforced: false, how: null });
    expect(asUser.pids!.reason).toContain("would count every process of the daemon's user");
    expect(asUser.cpu!.reason).toContain("no rlimit shares CPU time");
  });

  it("without prlimit: nothing stands in, said", () => {
    const none = byLimit(limiter(true, null));
    expect(none.memory).toMatchObject({ enforced: false, how: null });
    expect(none.memory!.reason).toContain("prlimit (util-linux) is not installed");
  });
});

describe("cgroup v2 on this machine, for real", () => {
  // Only the cgroup2 mount of this machine, as a v2-only machine has it: what the
  // kernel's cgroup.controllers says of the daemon's (this process's) own cgroup decides.
  const v2Mount = fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .find((l) => l.includes(" - cgroup2 "));
  const itWithV2 = v2Mount === undefined ? it.skip : it;
  itWithV2(
    `${v2Mount === undefined ? "[skipped: no cgroup2 mount here] " : ""}uses a controller only where it is delegated, and says why not`,
    () => {
      const own = fs.readFileSync("/proc/self/cgroup", "utf8");
      const plan = planCgroups(v2Mount!, own, (dir) =>
        fs.readFileSync(path.join(dir, "cgroup.controllers"), "utf8").trim().split(/\s+/).filter(Boolean),
      );
      const mountPoint = v2Mount!.split(" - ")[0]!.split(" ")[4]!;
      for (const c of ["memory", "pids", "cpu"] as const) {
        const ownDir = path.join(
          mountPoint,
          own
            .split("\n")
            .find((l) => l.startsWith("0::"))!
            .slice(3),
        );
        const offered = fs.readFileSync(path.join(ownDir.replace(/(.)\/+$/, "$1"), "cgroup.controllers"), "utf8");
        if (offered.split(/\s+/).includes(c)) expect(plan[c]).toMatchObject({ version: 2 });
        else
          expect(plan[c]).toMatchObject({ missing: expect.stringContaining(`the ${c} controller is not delegated`) });
      }
    },
  );
});
