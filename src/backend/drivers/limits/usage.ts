// What one command used (docs/operations.md, "Per-command usage"): a cgroup of its own
// below its sandbox's, in each hierarchy that measures something — cpuacct (v1) or the
// cpu.stat every v2 cgroup has, memory, pids:
//
//   <sandbox's cgroup>/cmd-<run>      (v2: the sandbox's init waits in <sandbox's cgroup>/init)
//
// The command is born in it: its sandbox's init is moved into it just before it forks
// the command, and back just after (environment.ts, one fork at a time), so everything
// the command starts is in it and nothing of a neighbour ever is. The sandbox's limits
// stay where they are, on the sandbox's cgroup above. What is read at the command's end
// is that cgroup's own counters — its CPU time, its memory peak, its OOM kills, its
// refused forks — against what the sandbox's counters said when it was asked for.
// `readUsage` is the pure reading (table-tested in test/unit/usage.test.ts).

import fs from "node:fs";
import path from "node:path";
import type { CommandUsage } from "../../../protocol/types.js";
import { homeOf, type MeasuredPlace } from "./cgroups.js";
import { parseKeyed } from "./spec.js";

export type MeasuredController = "memory" | "pids" | "cpuacct";
export type MeasuredPlaces = Record<MeasuredController, MeasuredPlace | { problem: string }>;

/** A usage where nothing could be measured: every figure null, saying why. */
export function unmeasured(why: string, measuredBy = "not measured"): CommandUsage {
  return {
    cpu_user_us: null,
    cpu_system_us: null,
    memory_peak_bytes: null,
    oom_kills: null,
    limits_hit: [],
    unavailable: { cpu: why, memory: why, limits: why },
    measured_by: measuredBy,
  };
}

/** A command of the none driver: a plain process group of the daemon's, in no cgroup of its own. */
export const NONE_USAGE: CommandUsage = unmeasured(
  "the none driver runs a command as a plain process group of the daemon's, in no cgroup of its own",
);

/** What the sandbox's own counters said when the command was asked for. */
export interface SandboxBaseline {
  /** v1 memory.failcnt (+ memsw's), v2 memory.events `max` + `oom`: times its memory limit was hit. */
  memoryHits: number | null;
  /** pids.events `max` of the sandbox's cgroup. */
  pidsRefused: number | null;
}

/** Reads one file of the command's cgroup (`own`) or of its sandbox's (`sandbox`), per controller; null when absent. */
export type CgroupReader = (controller: MeasuredController, where: "own" | "sandbox", file: string) => string | null;

/**
 * What the command used, from its cgroup's files (pure). `versions` says which
 * controllers it had a cgroup in (a missing one: `problems` says why).
 */
export function readUsage(
  read: CgroupReader,
  versions: Partial<Record<MeasuredController, 1 | 2>>,
  problems: Partial<Record<MeasuredController, string>>,
  baseline: SandboxBaseline,
): CommandUsage {
  const unavailable: Record<string, string> = {};
  let user: number | null = null;
  let system: number | null = null;
  const cpuV = versions.cpuacct;
  if (cpuV === 1) {
    const total = num(read("cpuacct", "own", "cpuacct.usage"));
    const u = num(read("cpuacct", "own", "cpuacct.usage_user"));
    const s = num(read("cpuacct", "own", "cpuacct.usage_sys"));
    if (total === null || u === null || s === null) unavailable.cpu = "cpuacct.usage_user/usage_sys cannot be read";
    else [user, system] = splitAsKernel(total / 1000, u, s);
  } else if (cpuV === 2) {
    const stat = read("cpuacct", "own", "cpu.stat");
    const keyed = stat === null ? null : parseKeyed(stat);
    user = keyed?.get("user_usec") ?? null;
    system = keyed?.get("system_usec") ?? null;
    if (user === null || system === null) unavailable.cpu = "cpu.stat cannot be read";
  } else unavailable.cpu = problems.cpuacct ?? "no cgroup counts CPU time here";

  let peak: number | null = null;
  let oomKills: number | null = null;
  const limitsHit: CommandUsage["limits_hit"] = [];
  const memV = versions.memory;
  if (memV !== undefined) {
    peak = num(read("memory", "own", memV === 1 ? "memory.max_usage_in_bytes" : "memory.peak"));
    if (peak === null) {
      unavailable.memory =
        memV === 2
          ? "memory.peak cannot be read (it needs Linux 5.19 or later)"
          : "memory.max_usage_in_bytes cannot be read";
    }
    const events = read("memory", "own", memV === 1 ? "memory.oom_control" : "memory.events");
    oomKills = events === null ? null : (parseKeyed(events).get("oom_kill") ?? 0);
    if (oomKills === null) unavailable.oom_kills = "its cgroup's OOM kill count cannot be read";
    else if (oomKills > 0) {
      // Killed: at the sandbox's limit when that limit was hit meanwhile, else the host ran out.
      const hits = memoryHits(read, memV);
      const rose = hits !== null && baseline.memoryHits !== null && hits > baseline.memoryHits;
      limitsHit.push(rose || (memV === 1 && peakAtLimitV1(read)) ? "memory" : "host_memory");
    }
  } else {
    unavailable.memory = problems.memory ?? "no memory cgroup here";
  }

  const pidsV = versions.pids;
  if (pidsV !== undefined) {
    const own = read("pids", "own", "pids.events");
    // v1 counts a refused fork in the forking cgroup; v2 (Linux 6.12 on) in the one whose
    // limit it hit: the sandbox's, read against what it said at the command's start.
    const ownRefused = own === null ? null : (parseKeyed(own).get("max") ?? 0);
    const sandboxRefused = pidsV === 2 ? pidsRefused(read) : null;
    const sandboxRose =
      sandboxRefused !== null && baseline.pidsRefused !== null && sandboxRefused > baseline.pidsRefused;
    if (ownRefused === null && sandboxRefused === null) unavailable.pids = "pids.events cannot be read";
    else if ((ownRefused ?? 0) > 0 || sandboxRose) limitsHit.push("pids");
  } else {
    unavailable.pids = problems.pids ?? "no pids cgroup here";
  }
  const used = (["cpuacct", "memory", "pids"] as const).filter((c) => versions[c] !== undefined);
  const byVersion = [1, 2]
    .map((v) => ({ v, cs: used.filter((c) => versions[c] === v) }))
    .filter((g) => g.cs.length > 0)
    .map((g) => `cgroup v${g.v} (${g.cs.join(", ")})`);
  return {
    cpu_user_us: user,
    cpu_system_us: system,
    memory_peak_bytes: peak,
    oom_kills: oomKills,
    limits_hit: limitsHit,
    unavailable,
    measured_by: byVersion.length === 0 ? "not measured" : `a cgroup of its own: ${byVersion.join(", ")}`,
  };
}

/** The sandbox's counters now (the baseline at a command's start). */
export function readBaseline(
  read: CgroupReader,
  versions: Partial<Record<MeasuredController, 1 | 2>>,
): SandboxBaseline {
  return {
    memoryHits: versions.memory === undefined ? null : memoryHits(read, versions.memory),
    pidsRefused: versions.pids === undefined ? null : pidsRefused(read),
  };
}

function memoryHits(read: CgroupReader, version: 1 | 2): number | null {
  if (version === 1) {
    // The limit is set on memory and on memory+swap (memsw, where swap is counted): either may be the one hit.
    const mem = num(read("memory", "sandbox", "memory.failcnt"));
    return mem === null ? null : mem + (num(read("memory", "sandbox", "memory.memsw.failcnt")) ?? 0);
  }
  const events = read("memory", "sandbox", "memory.events");
  if (events === null) return null;
  const keyed = parseKeyed(events);
  return (keyed.get("max") ?? 0) + (keyed.get("oom") ?? 0);
}

/**
 * v1: whether the sandbox's memory peak reached its limit (within 2 MiB). Linux 6.x no
 * longer counts memory.failcnt where memory+swap is limited too, so a kill at the
 * sandbox's limit can leave every counter but this one unchanged.
 */
function peakAtLimitV1(read: CgroupReader): boolean {
  const peak = num(read("memory", "sandbox", "memory.max_usage_in_bytes"));
  const limit = num(read("memory", "sandbox", "memory.limit_in_bytes"));
  return peak !== null && limit !== null && peak >= limit - 2 * 1024 * 1024;
}

function pidsRefused(read: CgroupReader): number | null {
  const events = read("pids", "sandbox", "pids.events");
  return events === null ? null : (parseKeyed(events).get("max") ?? 0);
}

/**
 * The exact total split between user and system time as the kernel splits it for
 * getrusage (cputime_adjust): in proportion to the ticks each got; all to one side when
 * the other got none.
 */
export function splitAsKernel(totalUs: number, userTicks: number, systemTicks: number): [number, number] {
  const total = Math.round(totalUs);
  if (systemTicks === 0) return [total, 0];
  if (userTicks === 0) return [0, total];
  const user = Math.round((total * userTicks) / (userTicks + systemTicks));
  return [user, total - user];
}

function num(text: string | null): number | null {
  if (text === null) return null;
  const t = text.trim();
  return /^\d+$/.test(t) ? Number(t) : null;
}

/** How long, and how often, a command's cgroup is looked at after its end until it is empty (background processes it left). */
const REMOVE_PAUSE_MS = 100;
const REMOVE_TRIES = 50;

/** How a command is measured, from its fork to its end (CommandCgroup, or nothing to move where nothing measures). */
export interface CommandMeasure {
  /** Whether the forking process must be moved around the fork (enter/leave do something). */
  readonly moves: boolean;
  enter(pid: number): void;
  leave(pid: number): void;
  read(): CommandUsage;
  done(): void;
}

/** A command nothing measures here: its usage says why. */
export function notMeasured(why: string): CommandMeasure {
  const usage = unmeasured(why);
  return { moves: false, enter: () => {}, leave: () => {}, read: () => usage, done: () => {} };
}

/** One command's cgroup, from before its fork until removed. */
export class CommandCgroup implements CommandMeasure {
  readonly moves = true;
  private readonly dirs = new Map<MeasuredController, { dir: string; home: string; version: 1 | 2 }>();
  private readonly problems: Partial<Record<MeasuredController, string>> = {};
  private baseline: SandboxBaseline = { memoryHits: null, pidsRefused: null };
  private made = false;
  private usage: CommandUsage | null = null;

  constructor(
    private readonly places: MeasuredPlaces,
    private readonly name: string,
  ) {
    for (const c of ["cpuacct", "memory", "pids"] as const) {
      const place = places[c];
      if ("problem" in place) this.problems[c] = place.problem;
      else this.problems[c] = "the command never started";
    }
  }

  /**
   * Just before the fork (its sandbox's cgroup exists by then): the command's cgroup is
   * made, the sandbox's counters noted, and `pid` (the init that forks it) joins it.
   */
  enter(pid: number): void {
    this.make();
    for (const [, d] of this.distinct()) {
      try {
        fs.writeFileSync(path.join(d.dir, "cgroup.procs"), `${pid}\n`);
      } catch (err) {
        for (const [c, other] of [...this.dirs]) {
          if (other.dir !== d.dir) continue;
          this.dirs.delete(c);
          this.problems[c] = `cannot move the sandbox's init into the command's cgroup: ${errno(err)}`;
        }
      }
    }
  }

  private make(): void {
    if (this.made) return;
    this.made = true;
    const made = new Map<string, string | null>();
    for (const c of ["cpuacct", "memory", "pids"] as const) {
      const place = this.places[c];
      if ("problem" in place) continue;
      const dir = path.join(place.dir, this.name);
      if (!made.has(dir)) made.set(dir, mkdir(dir));
      const failed = made.get(dir);
      if (failed) this.problems[c] = `cannot make the command's cgroup: ${failed}`;
      else {
        delete this.problems[c];
        this.dirs.set(c, { dir, home: homeOf(place.dir, place.version), version: place.version });
      }
    }
    this.baseline = readBaseline(this.reader(), this.versions());
  }

  /** Just after the fork: `pid` goes back to its own cgroup. */
  leave(pid: number): void {
    const homes = new Set<string>();
    for (const p of Object.values(this.places)) if (!("problem" in p)) homes.add(homeOf(p.dir, p.version));
    for (const home of homes) {
      try {
        fs.writeFileSync(path.join(home, "cgroup.procs"), `${pid}\n`);
      } catch {
        // the sandbox ended meanwhile
      }
    }
  }

  /** What the command used: read at its end, the same answer after. */
  read(): CommandUsage {
    this.usage ??= readUsage(this.reader(), this.versions(), this.problems, this.baseline);
    return this.usage;
  }

  /** The command ended: its cgroup goes once nothing is left in it (what it left in the background ends with the sandbox). */
  done(): void {
    let tries = 0;
    const attempt = () => {
      let left = false;
      for (const [, d] of this.distinct()) {
        try {
          fs.rmdirSync(d.dir);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "ENOENT") left = true;
        }
      }
      if (left && ++tries < REMOVE_TRIES) setTimeout(attempt, REMOVE_PAUSE_MS).unref();
    };
    attempt();
  }

  private versions(): Partial<Record<MeasuredController, 1 | 2>> {
    const out: Partial<Record<MeasuredController, 1 | 2>> = {};
    for (const [c, d] of this.dirs) out[c] = d.version;
    return out;
  }

  private distinct(): Array<[MeasuredController, { dir: string }]> {
    const seen = new Set<string>();
    return [...this.dirs].filter(([, d]) => !seen.has(d.dir) && seen.add(d.dir) !== undefined);
  }

  private reader(): CgroupReader {
    return (controller, where, file) => {
      const place = this.places[controller];
      if ("problem" in place) return null;
      const own = this.dirs.get(controller);
      const dir = where === "sandbox" ? place.dir : own?.dir;
      if (dir === undefined) return null;
      try {
        return fs.readFileSync(path.join(dir, file), "utf8");
      } catch {
        return null;
      }
    };
  }
}

function mkdir(dir: string): string | null {
  try {
    fs.mkdirSync(dir);
    return null;
  } catch (err) {
    return errno(err);
  }
}

function errno(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ?? e.message;
}
