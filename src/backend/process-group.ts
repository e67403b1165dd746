// A command run as the leader of its own process group, the way executions
// (runner.ts) and supervised process runs (process-run.ts) are started: output
// handed on chunk by chunk, the whole group signalled at once and ended as a whole
// (TERM, then KILL after a grace), and the /proc reading that tells whether a
// group is gone and whether a pid still belongs to the group leader we started.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";

export interface GroupLeaderSpec {
  /** argv[0] is the program. */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** A pipe to the leader's stdin; otherwise stdin is /dev/null. */
  stdin: boolean;
  onOutput: (stream: "stdout" | "stderr", chunk: Buffer) => void;
  /** Nothing was started (may be called during spawn()). */
  onSpawnError: (program: string, err: NodeJS.ErrnoException) => void;
  /** The leader exited (its status is the run's); the rest of the group may still hold the pipes. */
  onExit: (code: number | null, signal: NodeJS.Signals | null) => void;
  /**
   * The run is over: the output pipes closed, or, a moment after the leader exited,
   * the rest of the group (background jobs holding the pipes) was killed. May come twice.
   */
  onEnd: (code: number | null, signal: NodeJS.Signals | null) => void;
}

/** After the leader exits, how long the rest of the group may hold the output pipes before it is killed. */
export const LEADER_EXIT_LINGER_MS = 250;

/** After SIGKILL, how long to wait for the pipes to close before giving up on them. */
const CLOSE_FALLBACK_MS = 1000;
const GROUP_GONE_POLL_MS = 20;

/**
 * The leader of a process group and the timers that end it. The owner decides when
 * the run is over (settled) and calls release() or abandon() once.
 */
export class ProcessGroup {
  child: ChildProcess | null = null;
  /** The group (its leader's pid), or null when nothing could be started. */
  pgid: number | null = null;
  /** Start time of the group leader (from /proc), to recognise the group after a restart. */
  pgidStartTime: string | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();

  /** Starts the leader; false when nothing was started (onSpawnError is called, now or soon). */
  spawn(spec: GroupLeaderSpec): boolean {
    const program = spec.argv[0] ?? "";
    let child: ChildProcess;
    try {
      child = spawn(program, spec.argv.slice(1), {
        cwd: spec.cwd,
        env: spec.env,
        // Its own process group, so the whole tree can be signalled at once.
        detached: true,
        stdio: [spec.stdin ? "pipe" : "ignore", "pipe", "pipe"],
      });
    } catch (err) {
      spec.onSpawnError(program, err as NodeJS.ErrnoException);
      return false;
    }
    this.child = child;
    if (child.pid === undefined) {
      // Spawn failed (e.g. ENOENT); Node reports it on the 'error' event.
      child.on("error", (err: NodeJS.ErrnoException) => spec.onSpawnError(program, err));
      return false;
    }
    this.pgid = child.pid;
    this.pgidStartTime = readProcessStartTime(child.pid);
    child.stdout?.on("data", (chunk: Buffer) => spec.onOutput("stdout", chunk));
    child.stderr?.on("data", (chunk: Buffer) => spec.onOutput("stderr", chunk));
    child.stdin?.on("error", () => {
      // EPIPE when the command exits or closes its stdin (it need not read it); writes report it themselves.
    });
    child.on("error", () => {
      // Signalling errors after start; the end comes from 'exit'/'close'.
    });
    child.once("exit", (code, signal) => {
      spec.onExit(code, signal);
      this.later(LEADER_EXIT_LINGER_MS, () => this.kill(() => spec.onEnd(code, signal)));
    });
    child.once("close", spec.onEnd);
    return true;
  }

  /** Sends a signal to the whole group; false when it is gone (or never started). */
  signal(signal: NodeJS.Signals): boolean {
    return this.pgid !== null && signalProcessGroup(this.pgid, signal);
  }

  /** SIGTERM to the group now, then kill() after `graceMs`. */
  terminate(graceMs: number, giveUp: () => void): void {
    if (this.pgid === null) return;
    signalProcessGroup(this.pgid, "SIGTERM");
    this.later(graceMs, () => this.kill(giveUp));
  }

  /** SIGKILL to the group; `giveUp` runs if the output pipes are still open a while later. */
  kill(giveUp: () => void): void {
    if (this.pgid === null) return;
    signalProcessGroup(this.pgid, "SIGKILL");
    // A process outside the group may still hold the pipes; do not wait for it forever.
    this.later(CLOSE_FALLBACK_MS, giveUp);
  }

  /** The run is over: timers stop, whatever is left of the group is killed, the pipes are closed. */
  release(): void {
    this.clearTimers();
    // Whatever is left of the group (background jobs that closed their output) ends with it.
    if (this.pgid !== null) signalProcessGroup(this.pgid, "SIGKILL");
    this.child?.stdin?.destroy();
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
  }

  /** Forgets the process without ending it, as a crash would. */
  abandon(): void {
    this.clearTimers();
    const child = this.child;
    if (child) {
      child.removeAllListeners("close");
      child.removeAllListeners("exit");
      child.stdin?.destroy();
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.unref();
    }
  }

  /** Runs `fn` after `ms` unless the run is released or abandoned first. */
  later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

/** What a shell would answer for a command that could not be started: 127 not found, else 126. */
export function spawnFailure(program: string, err: NodeJS.ErrnoException): { exitCode: 126 | 127; message: Buffer } {
  const notFound = err.code === "ENOENT";
  const why = notFound ? "command not found" : err.code === "EACCES" ? "permission denied" : err.message;
  return { exitCode: notFound ? 127 : 126, message: Buffer.from(`sbx: ${program}: ${why}\n`) };
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

/**
 * Command names of the live processes in a group. Zombies waiting for a parent that
 * never reaps them (some container init processes) are dead already and do not count.
 * Throws when /proc cannot be read.
 */
export function groupMembers(pgid: number): string[] {
  const names: string[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // Fields after "(comm)": state is field 3, pgrp is field 5.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z") {
      names.push(stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")));
    }
  }
  return names;
}

/** True when no live process is left in a group (see groupMembers). */
export function processGroupGone(pgid: number): boolean {
  if (!signalProcessGroup(pgid, 0)) return true;
  try {
    return groupMembers(pgid).length === 0;
  } catch {
    return false;
  }
}

/** Resolves once the group is gone, or after `timeoutMs` (a process stuck in the kernel). */
export async function waitForGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (processGroupGone(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, GROUP_GONE_POLL_MS));
  }
}

/** A process's start time in clock ticks since boot (Linux /proc), or null. */
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

/**
 * Ends a process group left by an earlier run of the backend. If the group leader's
 * pid now belongs to another process (it started at another time), the group is
 * not ours any more and is left alone.
 */
export function endLostProcessGroup(pgid: number, leaderStartTime: string | null): "killed" | "gone" | "not_ours" {
  const now = readProcessStartTime(pgid);
  if (now !== null && leaderStartTime !== null && now !== leaderStartTime) return "not_ours";
  return signalProcessGroup(pgid, "SIGKILL") ? "killed" : "gone";
}
