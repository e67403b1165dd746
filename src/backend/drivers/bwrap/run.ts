// One bwrap run as the backend sees it (docs/drivers.md, "Processes"): the leader is
// bwrap (pid A, its own process group), which forks the namespace's init (B, pid 1
// inside), which runs the command in a new session. Signals for "the run" go to every
// process group in B's pid namespace except B's own, found by scanning /proc; SIGKILL
// ends A's group, and with it (die-with-parent, then the pid namespace) everything.
// bwrap reports a command killed by signal N as exit 128+N; when the backend delivered
// N to the run, it is reported as that signal again.

import type { ChildProcess } from "node:child_process";
import os from "node:os";
import type { SandboxChild } from "../driver.js";
import { liveProcesses, pidNamespace, readProcEntry, runMembers, signalProcessGroup } from "../proc.js";

const SIGNAL_NUMBERS = os.constants.signals as Record<string, number>;

export class BwrapRun implements SandboxChild {
  /** Signals delivered to the run, to recognise "128+N" as death by that signal. */
  private readonly delivered = new Set<number>();
  private init: { pid: number; ns: string } | null = null;

  constructor(
    readonly process: ChildProcess,
    /** Writes bwrap's options to a held run (once); null when they were written at spawn. */
    private writeArgs: (() => void) | null,
  ) {}

  proceed(): void {
    const write = this.writeArgs;
    this.writeArgs = null;
    write?.();
  }

  get pgid(): number {
    return this.process.pid ?? -1;
  }

  signal(signal: NodeJS.Signals): boolean {
    const leader = this.process.pid;
    if (leader === undefined) return false;
    const n = SIGNAL_NUMBERS[signal];
    if (n !== undefined) this.delivered.add(n);
    if (signal === "SIGKILL") return signalProcessGroup(leader, "SIGKILL");
    const init = this.findInit();
    const groups = new Set<number>();
    if (init !== null) {
      for (const p of liveProcesses()) {
        if (p.pid === init.pid || p.pgid === leader) continue;
        if (pidNamespace(p.pid) === init.ns) groups.add(p.pgid);
      }
    }
    // The command has not started yet (or has just ended): the signal goes to bwrap,
    // whose default action ends the run.
    if (groups.size === 0) return signalProcessGroup(leader, signal);
    let sent = false;
    for (const g of groups) sent = signalProcessGroup(g, signal) || sent;
    return sent;
  }

  commandExit(code: number | null, signal: NodeJS.Signals | null) {
    if (code !== null && code > 128 && this.delivered.has(code - 128)) {
      const name = Object.entries(SIGNAL_NUMBERS).find(([, n]) => n === code - 128)?.[0];
      if (name) return { code: null, signal: name as NodeJS.Signals };
    }
    return { code, signal };
  }

  members(): string[] {
    const leader = this.process.pid;
    return leader === undefined ? [] : runMembers(leader).map((p) => p.name);
  }

  /** B: bwrap's child, the pid namespace's init, once it exists. */
  private findInit(): { pid: number; ns: string } | null {
    if (this.init !== null && readProcEntry(this.init.pid) !== null) return this.init;
    const leader = this.process.pid;
    if (leader === undefined) return null;
    const child = liveProcesses().find((p) => p.ppid === leader);
    const ns = child ? pidNamespace(child.pid) : null;
    if (!child || ns === null || ns === pidNamespace(process.pid)) return null;
    this.init = { pid: child.pid, ns };
    return this.init;
  }
}
