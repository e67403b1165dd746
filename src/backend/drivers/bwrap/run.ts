// One bwrap run as the backend sees it (docs/drivers.md, "Processes"): the leader is
// bwrap (pid A, its own process group), which forks the namespace's init (B, pid 1
// inside), which runs the command in a new session. Signals for "the run" go to every
// process group in B's pid namespace except B's own, found by scanning /proc; SIGKILL
// ends A's group, and with it (die-with-parent, then the pid namespace) everything.
// bwrap reports a command killed by signal N as exit 128+N; when the backend delivered
// N to the run, it is reported as that signal again.
//
// Whether the command ever ran: bwrap reads a one-byte pipe (`--block-fd`) and closes
// it once the sandbox is set up, and reports `exit-code` on its status pipe only when
// it executed the command (status.ts). Until the sandbox is set up, what arrives on
// stderr is bwrap's own and is held back: a run that never started ends with
// `startFailure` (bwrap's message, without host paths) and no output of its own.

import type { ChildProcess } from "node:child_process";
import os from "node:os";
import type { Readable } from "node:stream";
import type { CommandEnd, SandboxChild } from "../driver.js";
import type { RunLimits } from "../limits/limiter.js";
import { liveProcesses, pidNamespace, readProcEntry, runMembers, signalProcessGroup } from "../proc.js";
import { parseStatus } from "./status.js";

const SIGNAL_NUMBERS = os.constants.signals as Record<string, number>;
/** bwrap's own messages are a line or two: more than this on stderr is the command's. */
const HOLD_LIMIT = 64 * 1024;

type Listener = (stream: "stdout" | "stderr", chunk: Buffer) => void;

export interface BwrapPipes {
  /** bwrap's `--json-status-fd`, or null when not reported. */
  status: Readable | null;
  /** The `--block-fd` pipe: it ends once bwrap closed it (set up) or died; null when not watched. */
  setup: Readable | null;
}

export class BwrapRun implements SandboxChild {
  readonly started: Promise<boolean>;
  /** Signals delivered to the run, to recognise "128+N" as death by that signal. */
  private readonly delivered = new Set<number>();
  /** The last signal the backend sent the run (a run ended before its command started reads as that). */
  private lastDelivered: NodeJS.Signals | null = null;
  private init: { pid: number; ns: string } | null = null;
  private resolveStarted!: (started: boolean) => void;
  private listener: Listener = () => {};
  /** stderr held back until the sandbox is set up; null once it flows. */
  private held: Buffer[] | null = [];
  private heldBytes = 0;
  private statusText = "";
  private statusDone: boolean;
  private setupDone: boolean;
  /** bwrap's stderr has ended: a run that never started is decided only once all it said is here. */
  private stderrDone: boolean;
  private end: CommandEnd | null = null;
  private readonly waiting: Array<(end: CommandEnd) => void> = [];
  private leaderEnd: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(
    readonly process: ChildProcess,
    /** Writes bwrap's options to a held run (once); null when they were written at spawn. */
    private writeArgs: (() => void) | null,
    private readonly pipes: BwrapPipes,
    /** argv[0], for "command not found" when bwrap could not execute it. */
    private readonly program: string,
    /** What the run got of its sandbox's limits (its cgroup): whether memory ended it. */
    private readonly limits: RunLimits,
  ) {
    this.started = new Promise((resolve) => {
      this.resolveStarted = resolve;
    });
    this.statusDone = pipes.status === null;
    this.setupDone = pipes.setup === null;
    this.stderrDone = process.stderr === null;
    process.stderr?.once("close", () => {
      this.stderrDone = true;
      this.settle();
    });
    pipes.status?.setEncoding("utf8");
    pipes.status?.on("data", (text: string) => {
      this.statusText += text;
      this.checkSetUp();
    });
    pipes.status?.on("close", () => {
      this.statusDone = true;
      this.settle();
    });
    pipes.setup?.on("close", () => {
      this.setupDone = true;
      this.checkSetUp();
    });
    pipes.setup?.resume();
    if (pipes.setup === null) this.passThrough();
  }

  proceed(): void {
    const write = this.writeArgs;
    this.writeArgs = null;
    write?.();
  }

  get pgid(): number {
    return this.process.pid ?? -1;
  }

  onOutput(listener: Listener): void {
    this.listener = listener;
    this.process.stdout?.on("data", (chunk: Buffer) => listener("stdout", chunk));
    this.process.stderr?.on("data", (chunk: Buffer) => {
      if (this.held === null) {
        listener("stderr", chunk);
        return;
      }
      this.held.push(chunk);
      this.heldBytes += chunk.length;
      if (this.heldBytes > HOLD_LIMIT) this.passThrough();
    });
  }

  signal(signal: NodeJS.Signals): boolean {
    const leader = this.process.pid;
    if (leader === undefined) return false;
    const n = SIGNAL_NUMBERS[signal];
    if (n !== undefined) this.delivered.add(n);
    this.lastDelivered = signal;
    if (signal === "SIGKILL") return signalProcessGroup(leader, "SIGKILL");
    const init = this.findInit();
    const groups = new Set<number>();
    if (init !== null) {
      for (const p of liveProcesses()) {
        if (p.pid === init.pid || p.pgid === leader) continue;
        if (pidNamespace(p.pid) === init.ns) groups.add(p.pgid);
      }
    }
    if (groups.size > 0) {
      let sent = false;
      for (const g of groups) sent = signalProcessGroup(g, signal) || sent;
      return sent;
    }
    // No command runs (bwrap still sets the sandbox up, or it has just ended): the run
    // ends whole. A signal to bwrap alone could leave its child to finish the set-up and
    // start the command after bwrap died, with nothing left to end it.
    if (init !== null) {
      try {
        process.kill(init.pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    return signalProcessGroup(leader, "SIGKILL");
  }

  commandEnd(code: number | null, signal: NodeJS.Signals | null, done: (end: CommandEnd) => void): void {
    this.leaderEnd ??= { code, signal };
    if (this.end !== null) {
      done(this.end);
      return;
    }
    this.waiting.push(done);
    this.settle();
  }

  members(): string[] {
    const leader = this.process.pid;
    return leader === undefined ? [] : runMembers(leader).map((p) => p.name);
  }

  /** The leader exited and bwrap's status is complete: how the command ended, told once. */
  private settle(): void {
    if (this.end !== null || this.leaderEnd === null || !this.statusDone) return;
    // A command that never ran: nothing of the sandbox holds stderr open, and bwrap's
    // message may still be on its way after its exit (seen under load: an empty cause).
    if (!this.stderrDone && this.held !== null && !this.ran()) return;
    const end = this.decide(this.leaderEnd.code, this.leaderEnd.signal);
    this.end = end;
    this.limits.done();
    for (const done of this.waiting.splice(0)) done(end);
  }

  /** bwrap executed the command (or does not say: then it is taken as run). */
  private ran(): boolean {
    return this.pipes.status === null || parseStatus(this.statusText).exitCode !== null;
  }

  private decide(code: number | null, signal: NodeJS.Signals | null): CommandEnd {
    if (this.ran()) {
      this.passThrough();
      this.resolveStarted(true);
      const ended = this.asSignal(code, signal);
      // Killed (SIGKILL, as bwrap's 128+9) by nobody here while the kernel's OOM killer
      // killed in the sandbox's cgroup: its memory limit ended it.
      const killed = ended.signal === "SIGKILL" || (ended.code === 128 + 9 && !this.delivered.has(9));
      if (killed && !this.delivered.has(9) && this.limits.oomKilled()) {
        return { code: null, signal: "SIGKILL", startFailure: null, endReason: "out_of_memory" };
      }
      return { ...ended, startFailure: null, endReason: null };
    }
    // bwrap never executed the command.
    const said = Buffer.concat(this.held ?? []).toString("utf8");
    this.held = null;
    const execFailure = /^bwrap: execvp [^\n]*: (No such file or directory|Permission denied)$/m.exec(said);
    if (execFailure) {
      // The sandbox was there; the program was not (or not executable): as a shell says it.
      const notFound = execFailure[1] === "No such file or directory";
      this.listener(
        "stderr",
        Buffer.from(`sbx: ${this.program}: ${notFound ? "command not found" : "permission denied"}\n`),
      );
      this.resolveStarted(true);
      return { code: notFound ? 127 : 126, signal: null, startFailure: null, endReason: null };
    }
    this.resolveStarted(false);
    // Ended by the backend before it started (a cancel, a timeout): not a failure to set up,
    // and it reads as the signal that was sent, as it would had the command been running.
    if (this.lastDelivered !== null) {
      return { code: null, signal: this.lastDelivered, startFailure: null, endReason: null };
    }
    return {
      code: null,
      signal: null,
      startFailure: startFailureCause(said, code, signal),
      endReason: null,
    };
  }

  private asSignal(
    code: number | null,
    signal: NodeJS.Signals | null,
  ): { code: number | null; signal: NodeJS.Signals | null } {
    if (code !== null && code > 128 && this.delivered.has(code - 128)) {
      const name = Object.entries(SIGNAL_NUMBERS).find(([, n]) => n === code - 128)?.[0];
      if (name) return { code: null, signal: name as NodeJS.Signals };
    }
    return { code, signal };
  }

  /** Once bwrap closed the set-up pipe while its child lives, the sandbox is set up: stderr is the command's. */
  private checkSetUp(): void {
    if (!this.setupDone || this.held === null) return;
    const child = parseStatus(this.statusText).childPid;
    const entry = child === null ? null : readProcEntry(child);
    // Died setting up (exiting: its descriptors, the set-up pipe's among them, close before
    // it is a zombie; seen under load), or not known yet: decided at the end.
    if (entry === null || entry.state === "Z" || entry.exiting) return;
    this.passThrough();
    this.resolveStarted(true);
  }

  private passThrough(): void {
    const held = this.held;
    this.held = null;
    for (const chunk of held ?? []) this.listener("stderr", chunk);
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

/** Inside paths a message may name; any other absolute path is the host's and is left out. */
const INSIDE = ["/workspace", "/usr", "/etc", "/proc", "/dev", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** Why a sandbox could not be set up, from bwrap's own message, in one line without a host path. */
export function startFailureCause(said: string, code: number | null, signal: NodeJS.Signals | null): string {
  const lines = said
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((l) => l.replace(/^bwrap: /, ""));
  const message = lines.join("; ");
  if (message === "") return `bwrap ended before it started the command (${signal ?? `exit ${code}`})`;
  return withoutHostPaths(message);
}

/** A message with every absolute path that is not one a sandbox has replaced by "(a host path)". */
export function withoutHostPaths(message: string): string {
  return message
    .replace(/\/(newroot|oldroot)(?=\/|\b)/g, (_m, which: string) => (which === "oldroot" ? "\0" : ""))
    .replace(/\0?(\/[^\s:;,'"]*)/g, (whole: string, p: string) => {
      if (whole.startsWith("\0")) return "(a host path)";
      const inside = p === "/" || p === "/tmp" || INSIDE.some((i) => p === i || p.startsWith(`${i}/`));
      return inside ? p : "(a host path)";
    })
    .replace(/\0/g, "");
}
