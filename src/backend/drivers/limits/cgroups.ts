// Where a sandbox's limits are enforced by the kernel (docs/drivers.md, "Limits"): one
// cgroup per sandbox, below the daemon's own cgroup in each hierarchy that has the
// controller, named after the daemon's data directory so that two daemons (two test
// suites, two users) never share one:
//
//   <hierarchy>/<the daemon's cgroup>/sbx-<hash of the data dir>/<sandbox id>
//
// cgroup v1 (a hierarchy per controller, writable by root: memory, pids, cpu) and v2
// (one hierarchy; usable where the controllers are delegated to the daemon's cgroup)
// are both read from /proc/self/mountinfo and /proc/self/cgroup, per controller, so a
// hybrid machine uses whichever has it. What the files are is spec.ts's (pure); this
// file makes the directories, writes them, moves a run's leader in, reads the memory
// events when the run ends and removes the cgroup once empty — and, when the daemon
// starts again after a crash, ends and removes whatever an earlier daemon left.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { SandboxLimits } from "../../../protocol/types.js";
import { freeze, isFrozen, thaw } from "./freezer.js";
import {
  type CgroupSetting,
  type CgroupVersion,
  type Controller,
  cgroupSettings,
  type MemoryEvents,
  memoryEventsV1,
  memoryEventsV2,
} from "./spec.js";

export const CONTROLLERS: readonly Controller[] = ["memory", "pids", "cpu"];

/**
 * The hierarchies a sandbox's processes join: the limits' controllers, and the freezer
 * that pauses them (freezer.ts): v1's `freezer` controller, or v2's cgroup.freeze, which
 * every non-root v2 cgroup has (no controller to enable).
 */
export type Hierarchy = Controller | "freezer";
export const HIERARCHIES: readonly Hierarchy[] = [...CONTROLLERS, "freezer"];

/** The file that lists a cgroup v1 controller's knob, to tell a hierarchy that has it. */
const V1_MARKER: Record<Hierarchy | "cpuacct", string> = {
  cpuacct: "cpuacct.usage",
  memory: "memory.limit_in_bytes",
  pids: "pids.max",
  cpu: "cpu.cfs_quota_us",
  freezer: "freezer.state",
};

/** Where one controller can be used: the daemon's own cgroup directory in its hierarchy. */
export interface ControllerPlace {
  version: CgroupVersion;
  /** The daemon's cgroup in that hierarchy (sbx's cgroups go below it). */
  ownDir: string;
}

/** Per controller: where it is mounted for this process, or why it is not. */
export type CgroupPlan = Record<Hierarchy, ControllerPlace | { missing: string }>;

/**
 * Where each controller is, from /proc/self/mountinfo and /proc/self/cgroup (pure).
 * A v1 hierarchy that mounts the controller wins over v2 (a controller is in one at a
 * time); for v2, `v2Controllers` says what the daemon's cgroup offers (its
 * cgroup.controllers), read by the caller.
 */
export function planCgroups(
  mountinfo: string,
  selfCgroup: string,
  v2Controllers: (ownDir: string) => string[] | null,
): CgroupPlan {
  return planFor(mountinfo, selfCgroup, v2Controllers, HIERARCHIES) as CgroupPlan;
}

/**
 * Where CPU time is counted (pure): v1's cpuacct hierarchy, else v2, whose cpu.stat
 * every cgroup has without any controller (docs/operations.md, "Per-command usage").
 */
export function planAccounting(mountinfo: string, selfCgroup: string): ControllerPlace | { missing: string } {
  return planFor(mountinfo, selfCgroup, () => ["cpuacct"], ["cpuacct"]).cpuacct!;
}

function planFor(
  mountinfo: string,
  selfCgroup: string,
  v2Controllers: (ownDir: string) => string[] | null,
  controllers: readonly string[],
): Record<string, ControllerPlace | { missing: string }> {
  const own = selfCgroup.split("\n").filter(Boolean);
  const v1 = new Map<string, string>();
  let v2: string | null = null;
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const root = fields[3];
    const mountPoint = fields[4]?.replace(/\\040/g, " ");
    const [fstype, , superOptions = ""] = right.split(" ");
    if (root === undefined || mountPoint === undefined) continue;
    if (fstype === "cgroup2") {
      const ownPath = own.find((l) => l.startsWith("0::"))?.slice(3);
      const rel = ownPath === undefined ? undefined : relativeTo(root, ownPath);
      if (rel !== undefined && v2 === null) v2 = joinDir(mountPoint, rel);
      continue;
    }
    if (fstype !== "cgroup") continue;
    const options = superOptions.split(",");
    for (const controller of controllers) {
      if (!options.includes(controller) || v1.has(controller)) continue;
      const entry = own.find((l) => l.split(":")[1]?.split(",").includes(controller));
      const ownPath = entry?.slice(entry.indexOf(":", entry.indexOf(":") + 1) + 1);
      const rel = ownPath === undefined ? undefined : relativeTo(root, ownPath);
      if (rel !== undefined) v1.set(controller, joinDir(mountPoint, rel));
    }
  }
  const offered = v2 === null ? null : v2Controllers(v2);
  const plan: Record<string, ControllerPlace | { missing: string }> = {};
  for (const controller of controllers) {
    const v1Dir = v1.get(controller);
    if (v1Dir !== undefined) plan[controller] = { version: 1, ownDir: v1Dir };
    else if (v2 !== null && (controller === "freezer" || offered?.includes(controller))) {
      plan[controller] = { version: 2, ownDir: v2 };
    } else if (v2 !== null) {
      plan[controller] = {
        missing: `the ${controller} controller is not delegated to the daemon's cgroup (${v2}: cgroup.controllers has ${offered?.join(" ") || "nothing"})`,
      };
    } else plan[controller] = { missing: `no cgroup hierarchy has the ${controller} controller` };
  }
  return plan;
}

/** A directory path without a trailing slash ("/a" and "/" joined is "/a"). */
function joinDir(mountPoint: string, rel: string): string {
  return path.join(mountPoint, rel).replace(/(.)\/+$/, "$1");
}

/** `p` relative to a mount's root when it lies under it ("/" for the root itself). */
function relativeTo(root: string, p: string): string | undefined {
  if (root === "/") return p;
  if (p === root) return "/";
  return p.startsWith(`${root}/`) ? p.slice(root.length) : undefined;
}

/** How a controller is used once checked: its base directory, or why it is not used. */
type ControllerState = { version: CgroupVersion; base: string } | { problem: string };

/** A run's membership of its sandbox's cgroup, from its attach until its end. */
export interface CgroupMembership {
  /** Whether the kernel's OOM killer killed a process of the sandbox since the run joined. */
  oomKilledSince(): boolean;
  /** The run ended: the sandbox's cgroup goes when nothing else is in it. */
  leave(): void;
}

export interface CgroupLimitsOptions {
  /** The daemon's data directory: the base cgroup's name is made from it. */
  dataDir: string;
  /** Read from /proc/self by default (tests give their own, with a directory tree that plays the cgroup file system). */
  mountinfo?: string;
  selfCgroup?: string;
}

/** The base cgroup's name for a daemon whose data directory is `dataDir`. */
export function baseName(dataDir: string): string {
  return `sbx-${createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 12)}`;
}

const SANDBOX_DIR = /^[A-Za-z0-9_.-]+$/;
/** After a run, how often and how long its sandbox's cgroup is looked at until it is empty and removed. */
const LEAVE_PAUSE_MS = 50;
const LEAVE_TRIES = 100;

/** The cgroups of one backend's sandboxes. */
export class CgroupLimits {
  private readonly state: Record<Hierarchy, ControllerState>;
  /** Where CPU time is counted (no limit: cpuacct in v1, cpu.stat in v2). */
  private readonly accounting: ControllerState;
  readonly name: string;

  constructor(opts: CgroupLimitsOptions) {
    this.name = baseName(opts.dataDir);
    const plan = planCgroups(
      opts.mountinfo ?? readText("/proc/self/mountinfo") ?? "",
      opts.selfCgroup ?? readText("/proc/self/cgroup") ?? "",
      (dir) => readText(path.join(dir, "cgroup.controllers"))?.trim().split(/\s+/).filter(Boolean) ?? null,
    );
    this.state = {} as Record<Hierarchy, ControllerState>;
    for (const controller of HIERARCHIES) this.state[controller] = this.check(controller, plan[controller]);
    this.accounting = this.check(
      "cpuacct",
      planAccounting(
        opts.mountinfo ?? readText("/proc/self/mountinfo") ?? "",
        opts.selfCgroup ?? readText("/proc/self/cgroup") ?? "",
      ),
    );
  }

  /**
   * Where a sandbox's commands are measured (limits/usage.ts): per measured controller,
   * the sandbox's cgroup in that hierarchy and its version, or why it cannot be.
   */
  measuredPlaces(sandboxId: string): Record<"memory" | "pids" | "cpuacct", MeasuredPlace | { problem: string }> {
    const place = (st: ControllerState) =>
      "problem" in st ? st : { version: st.version, dir: path.join(st.base, sandboxId) };
    return { memory: place(this.state.memory), pids: place(this.state.pids), cpuacct: place(this.accounting) };
  }

  /** How each controller is used here, or why not (for limit_status and /health). */
  controller(controller: Hierarchy): { version: CgroupVersion; base: string } | { problem: string } {
    return this.state[controller];
  }

  /** Makes (or updates) a sandbox's cgroup with these limits. Throws saying which file could not be written. */
  apply(sandboxId: string, limits: SandboxLimits): void {
    for (const [dir, version] of this.sandboxDirs(sandboxId)) {
      fs.mkdirSync(homeOf(dir, version), { recursive: true });
      // v2: each command's cgroup below has memory and pids of its own (limits/usage.ts);
      // a cgroup that hands controllers down holds no process, hence the init's leaf.
      if (version === 2)
        for (const c of ["memory", "pids"] as const) if (!("problem" in this.state[c])) enableV2(dir, c);
    }
    for (const controller of CONTROLLERS) {
      const st = this.state[controller];
      if ("problem" in st) continue;
      const dir = path.join(st.base, sandboxId);
      const settings = cgroupSettings(limits, st.version).filter((s) => s.controller === controller);
      writeSettings(dir, settings);
    }
  }

  /**
   * Moves `pid` (a run's leader, before it started anything) into the sandbox's cgroup,
   * made with `limits` first; everything it starts is in it too.
   *
   * From its mkdir until the leader is in it, the sandbox's cgroup is empty, and another
   * program may remove an empty cgroup at any moment (a sweep of empty cgroups: the test
   * suite's, at each run's start and end, reaches those of every daemon in the same cgroup
   * as that run, e.g. of every process at the root of cgroup v1's pids hierarchy). When one of its directories is
   * gone after a write failed, it is made and written again from the start: the leader
   * never joins a cgroup with fewer limits than asked.
   */
  attach(sandboxId: string, limits: SandboxLimits, pid: number): CgroupMembership {
    for (let attempt = 1; ; attempt++) {
      try {
        this.apply(sandboxId, limits);
        for (const [dir, version] of this.sandboxDirs(sandboxId)) {
          try {
            fs.writeFileSync(path.join(homeOf(dir, version), "cgroup.procs"), `${pid}\n`);
          } catch (err) {
            throw new Error(`cannot move the sandbox's process into its cgroup: ${errno(err)}`);
          }
        }
        break;
      } catch (err) {
        if (attempt < 3 && this.sandboxDirs(sandboxId).some(([dir]) => !fs.existsSync(dir))) continue;
        throw err;
      }
    }
    const baseline = this.memoryEvents(sandboxId)?.oomKills ?? 0;
    return {
      oomKilledSince: () => (this.memoryEvents(sandboxId)?.oomKills ?? 0) > baseline,
      leave: () => this.removeWhenEmpty(sandboxId),
    };
  }

  /** The sandbox's memory events (OOM kills, limit hits), or null when memory is not limited by a cgroup here. */
  memoryEvents(sandboxId: string): MemoryEvents | null {
    const st = this.state.memory;
    if ("problem" in st) return null;
    const dir = path.join(st.base, sandboxId);
    if (st.version === 2) {
      const events = readText(path.join(dir, "memory.events"));
      return events === null ? null : memoryEventsV2(events);
    }
    const oom = readText(path.join(dir, "memory.oom_control"));
    return oom === null ? null : memoryEventsV1(oom, readText(path.join(dir, "memory.failcnt")) ?? "0");
  }

  /** Processes in the sandbox's cgroup now. */
  processes(sandboxId: string): number[] {
    const pids = new Set<number>();
    for (const [dir] of this.sandboxDirs(sandboxId)) {
      for (const d of [dir, ...subdirs(dir)]) for (const pid of readProcs(d)) pids.add(pid);
    }
    return [...pids];
  }

  /**
   * Removes the sandbox's cgroup once no process is in it: the last processes of a run
   * (bwrap's own, the pid namespace ending) leave it a moment after the run ended, so
   * this looks again for a while. Another run that joined meanwhile keeps it.
   */
  removeWhenEmpty(sandboxId: string): void {
    let tries = 0;
    const attempt = () => {
      if (this.removeIfEmpty(sandboxId) || ++tries >= LEAVE_TRIES) return;
      setTimeout(attempt, LEAVE_PAUSE_MS).unref();
    };
    attempt();
  }

  /** Removes the sandbox's cgroup when no process is in it; true when it is gone. */
  removeIfEmpty(sandboxId: string): boolean {
    let gone = true;
    for (const [dir] of this.sandboxDirs(sandboxId)) {
      try {
        // Its commands' cgroups and its init's leaf (v2) first: a cgroup with children stays.
        for (const sub of subdirs(dir)) fs.rmdirSync(sub);
        fs.rmdirSync(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") gone = false;
      }
    }
    return gone;
  }

  /**
   * Freezes every process of the sandbox (freezer.ts); resolves once they all stopped.
   * Throws saying why not: no freezer here, or the sandbox has no cgroup (not running).
   */
  async freeze(sandboxId: string): Promise<void> {
    const st = this.state.freezer;
    if ("problem" in st) throw new Error(st.problem);
    if (!SANDBOX_DIR.test(sandboxId)) throw new Error(`not a sandbox id: ${JSON.stringify(sandboxId)}`);
    const dir = path.join(st.base, sandboxId);
    if (!fs.existsSync(dir)) throw new Error("the sandbox has no cgroup: it does not run");
    await freeze(dir, st.version);
  }

  /** Thaws the sandbox's processes (nothing when it is not frozen, or has no freezer here). */
  thaw(sandboxId: string): void {
    const st = this.state.freezer;
    if (!("problem" in st)) thaw(path.join(st.base, sandboxId), st.version);
  }

  /** Whether the sandbox's processes are frozen (or freezing) now. */
  frozen(sandboxId: string): boolean {
    const st = this.state.freezer;
    if ("problem" in st || !SANDBOX_DIR.test(sandboxId)) return false;
    return isFrozen(path.join(st.base, sandboxId), st.version);
  }

  /** Ends every process left in the sandbox's cgroup and removes it (sandbox removed, daemon stopping or recovering). */
  remove(sandboxId: string): { killed: number; removed: boolean } {
    // A frozen process (v1) dies of SIGKILL only once thawed.
    this.thaw(sandboxId);
    let killed = 0;
    for (let attempt = 0; attempt < 100; attempt++) {
      const pids = this.processes(sandboxId);
      if (pids.length === 0 && this.removeIfEmpty(sandboxId)) return { killed, removed: true };
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
          if (attempt === 0) killed++;
        } catch {
          // gone meanwhile
        }
      }
      pause(10);
    }
    return { killed, removed: this.removeIfEmpty(sandboxId) };
  }

  /** Sandbox ids that have a cgroup under the base now. */
  sandboxes(): string[] {
    const found = new Set<string>();
    for (const st of [...Object.values(this.state), this.accounting]) {
      if ("problem" in st) continue;
      try {
        for (const e of fs.readdirSync(st.base, { withFileTypes: true })) {
          if (e.isDirectory() && SANDBOX_DIR.test(e.name)) found.add(e.name);
        }
      } catch {
        // no base yet
      }
    }
    return [...found];
  }

  /**
   * What an earlier daemon of this data directory left (it was killed): the cgroup of a
   * sandbox that no longer exists goes with whatever is in it; the others go when empty
   * (a run the daemon's own recovery ended, or that died with the daemon).
   */
  recover(exists: (sandboxId: string) => boolean): { removed: string[]; killed: number } {
    const removed: string[] = [];
    let killed = 0;
    for (const sandboxId of this.sandboxes()) {
      // Paused when that daemon died: its processes could not even die (v1) until thawed.
      this.thaw(sandboxId);
      if (exists(sandboxId)) {
        if (this.removeIfEmpty(sandboxId)) removed.push(sandboxId);
        continue;
      }
      const gone = this.remove(sandboxId);
      killed += gone.killed;
      if (gone.removed) removed.push(sandboxId);
    }
    return { removed, killed };
  }

  /** The daemon stops: every sandbox cgroup goes, then the base. */
  close(): void {
    for (const sandboxId of this.sandboxes()) this.remove(sandboxId);
    for (const st of [...Object.values(this.state), this.accounting]) {
      if ("problem" in st) continue;
      try {
        fs.rmdirSync(st.base);
      } catch {
        // not empty (a process stuck in the kernel), or gone
      }
    }
  }

  /** Each distinct directory of the sandbox's cgroup (v1: one per hierarchy; v2: one). */
  private sandboxDirs(sandboxId: string): Array<[string, CgroupVersion]> {
    if (!SANDBOX_DIR.test(sandboxId)) throw new Error(`not a sandbox id: ${JSON.stringify(sandboxId)}`);
    const dirs = new Map<string, CgroupVersion>();
    for (const st of [...Object.values(this.state), this.accounting]) {
      if (!("problem" in st)) dirs.set(path.join(st.base, sandboxId), st.version);
    }
    return [...dirs];
  }

  /** Whether the controller's place can be used: the base made (and, v2, the controller enabled down to it). */
  private check(controller: Hierarchy | "cpuacct", place: ControllerPlace | { missing: string }): ControllerState {
    if ("missing" in place) return { problem: place.missing };
    const base = path.join(place.ownDir, this.name);
    try {
      fs.mkdirSync(base, { recursive: true });
    } catch (err) {
      return { problem: `cannot make cgroup ${base}: ${errno(err)}` };
    }
    const marker =
      place.version === 1 ? V1_MARKER[controller] : controller === "freezer" ? "cgroup.freeze" : "cgroup.procs";
    if (!fs.existsSync(path.join(base, marker))) {
      return {
        problem:
          controller === "freezer" && place.version === 2
            ? `${base} has no cgroup.freeze (the cgroup v2 freezer needs Linux 5.2 or later)`
            : `${base} is not a cgroup with the ${controller} controller`,
      };
    }
    if (place.version === 2 && controller !== "freezer" && controller !== "cpuacct") {
      // v2: a controller reaches a cgroup only when every parent enables it for its children.
      for (const dir of [place.ownDir, base]) {
        const problem = enableV2(dir, controller);
        if (problem !== null) {
          return {
            problem: `cgroup v2: cannot enable ${controller} in ${dir} (${problem}); run the daemon in a cgroup delegated to it, e.g. systemd-run -p Delegate=yes`,
          };
        }
      }
    }
    return { version: place.version, base };
  }
}

/**
 * Writes settings in order. v1's memory.limit_in_bytes may never exceed
 * memory.memsw.limit_in_bytes: when raising it is refused, memsw goes first.
 */
export function writeSettings(dir: string, settings: CgroupSetting[]): void {
  for (let i = 0; i < settings.length; i++) {
    const s = settings[i]!;
    const file = path.join(dir, s.file);
    if (s.optional && !fs.existsSync(file)) continue;
    try {
      fs.writeFileSync(file, s.value);
    } catch (err) {
      const next = settings[i + 1];
      const swapFile = next === undefined ? null : path.join(dir, next.file);
      if (
        s.file === "memory.limit_in_bytes" &&
        next?.file === "memory.memsw.limit_in_bytes" &&
        fs.existsSync(swapFile!)
      ) {
        fs.writeFileSync(swapFile!, next.value);
        fs.writeFileSync(file, s.value);
        i++;
        continue;
      }
      throw new Error(`cannot set ${s.file} of the sandbox's cgroup: ${errno(err)}`);
    }
  }
}

/** Enables a v2 controller for a cgroup's children (cgroup.subtree_control); null when it is, else why not. */
export function enableV2(dir: string, controller: Controller): string | null {
  const file = path.join(dir, "cgroup.subtree_control");
  const enabled = readText(file)?.trim().split(/\s+/) ?? [];
  if (enabled.includes(controller)) return null;
  try {
    fs.writeFileSync(file, `+${controller}`);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "EBUSY" ? "EBUSY: that cgroup has processes of its own" : errno(err);
  }
}

/** A sandbox's cgroup's own processes' place: itself in v1; in v2 its leaf `init` (it hands controllers down). */
export function homeOf(dir: string, version: CgroupVersion): string {
  return version === 2 ? path.join(dir, "init") : dir;
}

/** A measured controller's place for one sandbox. */
export interface MeasuredPlace {
  version: CgroupVersion;
  /** The sandbox's cgroup in that hierarchy. */
  dir: string;
}

/** The cgroups right below `dir` (a sandbox's: its commands', its init's leaf). */
function subdirs(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.join(dir, e.name));
  } catch {
    return [];
  }
}

function readProcs(dir: string): number[] {
  const text = readText(path.join(dir, "cgroup.procs"));
  if (text === null) return [];
  return text
    .split("\n")
    .filter((l) => /^\d+$/.test(l))
    .map(Number);
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function errno(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ?? e.message;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function pause(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}
