// Reading /proc (Linux) and signalling process groups: how the drivers tell which
// processes belong to a run, and how restart recovery recognises a group it left.

import fs from "node:fs";

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  /** The session it belongs to (the pid of the session's leader, as the host numbers it). */
  sid: number;
  /** One letter: R, S, D, Z, … */
  state: string;
  /** The command name (comm). */
  name: string;
  /**
   * The kernel is ending it (PF_EXITING in its flags): it has closed, or is closing, its
   * descriptors, but is not a zombie yet. A pipe it held may already read as closed.
   */
  exiting: boolean;
}

/** proc(5) stat "flags": the process is exiting. */
const PF_EXITING = 0x4;

/** Parses /proc/PID/stat; null when the process is gone. */
export function readProcEntry(pid: number): ProcEntry | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Fields after "(comm)": state is field 3, ppid 4, pgrp 5, flags 9.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    pid,
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    state: fields[0] ?? "?",
    name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
    exiting: (Number(fields[6]) & PF_EXITING) !== 0,
  };
}

/**
 * Every live process this backend can see. Zombies waiting for a parent that never
 * reaps them (some container init processes) are dead already and are left out.
 * Throws when /proc cannot be read.
 */
export function liveProcesses(): ProcEntry[] {
  const out: ProcEntry[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    const entry = readProcEntry(Number(name));
    if (entry !== null && entry.state !== "Z") out.push(entry);
  }
  return out;
}

/** Command names of the live processes in a group (see liveProcesses). Throws when /proc cannot be read. */
export function groupMembers(pgid: number): string[] {
  return liveProcesses()
    .filter((p) => p.pgid === pgid)
    .map((p) => p.name);
}

/**
 * The live processes of a run recorded by its process group: the group's members
 * and, when one of them started a pid namespace of its own (a bwrap sandbox's
 * init), every process in that namespace. Throws when /proc cannot be read.
 */
export function runMembers(pgid: number): ProcEntry[] {
  const all = liveProcesses();
  const group = new Set(all.filter((p) => p.pgid === pgid).map((p) => p.pid));
  const hostNamespace = pidNamespace(process.pid);
  const namespaces = new Set<string>();
  for (const p of all) {
    if (!group.has(p.ppid)) continue;
    const ns = pidNamespace(p.pid);
    if (ns !== null && ns !== hostNamespace) namespaces.add(ns);
  }
  if (namespaces.size === 0) return all.filter((p) => group.has(p.pid));
  return all.filter((p) => group.has(p.pid) || namespaces.has(pidNamespace(p.pid) ?? ""));
}

/** The live processes of a session (a run on a terminal: its leader's). Throws when /proc cannot be read. */
export function sessionMembers(sid: number): ProcEntry[] {
  return liveProcesses().filter((p) => p.sid === sid);
}

/** The pid namespace a process is in ("pid:[4026531836]"), or null when it cannot be read. */
export function pidNamespace(pid: number): string | null {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

/** The pids of a process's children, as the host numbers them (every thread's). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      for (const c of fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ")) {
        if (c.trim() !== "") out.push(Number(c));
      }
    } catch {
      // the thread ended
    }
  }
  return out;
}

/**
 * `root` and every live process descended from it, by the kernel's children lists: the
 * processes of a pid namespace whose init is `root` (an orphan there is re-parented to
 * it), read without a scan of all of /proc. Zombies are left out (their children, if
 * any, are walked). A process forked while the walk runs may be missed, as by a scan.
 */
export function processTree(root: number): ProcEntry[] {
  const out: ProcEntry[] = [];
  const seen = new Set<number>();
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    if (seen.has(pid)) continue;
    seen.add(pid);
    const entry = readProcEntry(pid);
    if (entry === null) continue;
    if (entry.state !== "Z") out.push(entry);
    queue.push(...childrenOf(pid));
  }
  return out;
}

/** A process's pid in its innermost pid namespace (the last of /proc/PID/status's NSpid), or null. */
export function innermostPid(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const line = status.split("\n").find((l) => l.startsWith("NSpid:"));
    const last = line?.trim().split(/\s+/).pop();
    return last === undefined ? null : Number(last);
  } catch {
    return null;
  }
}

/** A process's pid and session id in its innermost pid namespace (NSpid and NSsid of /proc/PID/status), or null. */
export function innermostIds(pid: number): { pid: number; sid: number } | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const last = (name: string) => {
      const line = status.split("\n").find((l) => l.startsWith(`${name}:`));
      return Number(line?.trim().split(/\s+/).pop());
    };
    const ids = { pid: last("NSpid"), sid: last("NSsid") };
    return Number.isInteger(ids.pid) && Number.isInteger(ids.sid) ? ids : null;
  } catch {
    return null;
  }
}

/** Sends a signal to a whole process group; false when the group is gone. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** A process's start time in clock ticks since boot, or null. */
export function readProcessStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after "(comm)": state is field 3, starttime is field 22.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

let cachedBootId: string | null | undefined;

/** This boot's id (Linux), to tell a process group from one of an earlier boot with the same number. */
export function bootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId;
}
