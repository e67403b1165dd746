// A command run as the leader of its own process group, the way executions
// (executions/runner.ts) and supervised process runs (processes/run.ts) are started: spawned by
// the sandbox's driver (drivers/driver.ts), output handed on chunk by chunk, every
// process of the run signalled at once and ended as a whole (TERM, then KILL after
// a grace).

import type { CommandUsage, EndReason } from "../../protocol/types.js";
import {
  type SandboxChild,
  type SandboxDriver,
  type SandboxPlacement,
  SpawnError,
  type SpawnRequest,
  type TerminalControl,
} from "./driver.js";
import { readProcessStartTime } from "./proc.js";

/** A command run once in a sandbox, as executions (executions/runner.ts) and jobs (jobs/job-run.ts) start it. */
export interface OneShotCommand {
  driver: SandboxDriver;
  placement: SandboxPlacement;
  /** argv[0] is the program; a shell command arrives here as ["/bin/sh", "-c", command]. */
  argv: string[];
  /** Real directory on this host, inside the workspace. */
  cwd: string;
  /** The complete environment (commandEnvironment). */
  env: Record<string, string>;
  /** Bytes written once to stdin, then closed; null: stdin is /dev/null. */
  stdin: Buffer | null;
  timeoutMs: number;
}

/** How a one-shot command's leader is spawned: stdin is a pipe when there are bytes to write to it. */
export function leaderOf(
  cmd: OneShotCommand,
): Pick<GroupLeaderSpec, "driver" | "placement" | "argv" | "cwd" | "env" | "stdin"> {
  return {
    driver: cmd.driver,
    placement: cmd.placement,
    argv: cmd.argv,
    cwd: cmd.cwd,
    env: cmd.env,
    stdin: cmd.stdin !== null,
  };
}

/** What the driver spawns (placement, argv, cwd, env, stdin, held), by which driver, and what to tell. */
export interface GroupLeaderSpec extends SpawnRequest {
  driver: SandboxDriver;
  onOutput: (stream: "stdout" | "stderr", chunk: Buffer) => void;
  /** Nothing was started (may be called during spawn()). */
  onSpawnError: (program: string, err: SpawnError) => void;
  /** The command's own host pid, when the driver learns it after the spawn (a live sandbox's run). */
  onCommandPid?: (pid: number) => void;
  /**
   * The leader exited (its status is the run's); the rest of the group may still hold
   * the pipes. `startFailure`: the sandbox could not be set up, the command never ran
   * (why, without host paths; code and signal are null then).
   */
  onExit: (code: number | null, signal: NodeJS.Signals | null, startFailure: string | null) => void;
  /**
   * The run is over: the output pipes closed, or, a moment after the leader exited,
   * the rest of the group (background jobs holding the pipes) was killed. May come twice.
   */
  onEnd: (code: number | null, signal: NodeJS.Signals | null, startFailure: string | null) => void;
}

/** After the leader exits, how long the rest of the group may hold the output pipes before it is killed. */
export const LEADER_EXIT_LINGER_MS = 250;

/** A run that was ended (timeout, cancel): how long to wait for its last process to disappear. */
const GROUP_GONE_WAIT_MS = 5000;

/** After SIGKILL, how long to wait for the pipes to close before giving up on them. */
const CLOSE_FALLBACK_MS = 1000;
const GROUP_GONE_POLL_MS = 20;

/**
 * The leader of a run and the timers that end it. The owner decides when the run
 * is over (settled) and calls release() or abandon() once.
 */
export class ProcessGroup {
  private run: SandboxChild | null = null;
  /** The run's host process group (its leader's pid), or null when nothing could be started. */
  pgid: number | null = null;
  /** The command's own host pid (a process's os_pid): null until known, and in a live sandbox until its init said it started. */
  commandPid: number | null = null;
  /** Start time of the group leader (from /proc), to recognise the group after a restart. */
  pgidStartTime: string | null = null;
  /** Why the command ended when its driver knows more than its exit (`out_of_memory`), once it ended. */
  endReason: EndReason | null = null;
  /** What the command used, once it ended (its driver's measure; null: it never started). */
  usage: CommandUsage | null = null;
  /** Where it ran failed under it (CommandEnd.interrupted), once it ended; else null. */
  interrupted: string | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();

  get child() {
    return this.run?.process ?? null;
  }

  /** The run's terminal (a run spawned on one), or null. */
  get terminal(): TerminalControl | null {
    return this.run?.terminal ?? null;
  }

  /** Resolves true once the command started, false when it never will (nothing spawned, or its sandbox not set up). */
  get started(): Promise<boolean> {
    return this.run?.started ?? Promise.resolve(false);
  }

  /** Starts the leader; false when nothing was started (onSpawnError is called, now or soon). */
  spawn(spec: GroupLeaderSpec): boolean {
    const program = spec.argv[0] ?? "";
    let run: SandboxChild;
    try {
      run = spec.driver.spawn({
        placement: spec.placement,
        argv: spec.argv,
        cwd: spec.cwd,
        env: spec.env,
        stdin: spec.stdin,
        ...(spec.held === true && { held: true }),
        ...(spec.terminal !== undefined && { terminal: spec.terminal }),
      });
    } catch (err) {
      spec.onSpawnError(program, SpawnError.from(err));
      return false;
    }
    this.run = run;
    const child = run.process;
    if (child.pid === undefined) {
      // Spawn failed (e.g. ENOENT); Node reports it on the 'error' event.
      child.on("error", (err) => spec.onSpawnError(program, SpawnError.from(err)));
      return false;
    }
    this.pgid = child.pid;
    this.pgidStartTime = readProcessStartTime(child.pid);
    this.commandPid = run.reportsCommandPid === true ? null : child.pid;
    run.onOutput(spec.onOutput);
    child.stdin?.on("error", () => {
      // EPIPE when the command exits or closes its stdin (it need not read it); writes report it themselves.
    });
    child.on("error", () => {
      // Signalling errors after start; the end comes from 'exit'/'close'.
    });
    // A live sandbox's run: the command's own pid, once known, is the group recorded.
    child.once("command-pid", (pid: number) => {
      this.pgid = pid;
      this.commandPid = pid;
      this.pgidStartTime = readProcessStartTime(pid);
      spec.onCommandPid?.(pid);
    });
    child.once("exit", (leaderCode: number | null, leaderSignal: NodeJS.Signals | null) => {
      run.commandEnd(leaderCode, leaderSignal, ({ code, signal, startFailure, endReason, usage, interrupted }) => {
        this.endReason = endReason;
        this.usage = usage;
        this.interrupted = interrupted ?? null;
        spec.onExit(code, signal, startFailure);
        this.later(LEADER_EXIT_LINGER_MS, () => this.kill(() => spec.onEnd(code, signal, startFailure)));
      });
    });
    child.once("close", (leaderCode: number | null, leaderSignal: NodeJS.Signals | null) => {
      run.commandEnd(leaderCode, leaderSignal, ({ code, signal, startFailure, endReason, usage, interrupted }) => {
        this.endReason = endReason;
        this.usage = usage;
        this.interrupted = interrupted ?? null;
        spec.onEnd(code, signal, startFailure);
      });
    });
    return true;
  }

  /** A run spawned held starts its command. */
  proceed(): void {
    this.run?.proceed();
  }

  /** Sends a signal to every process of the run; false when it is gone (or never started). */
  signal(signal: NodeJS.Signals): boolean {
    return this.pgid !== null && this.run?.signal(signal) === true;
  }

  /** SIGTERM to the run now, then kill() after `graceMs`. */
  terminate(graceMs: number, giveUp: () => void): void {
    if (this.pgid === null) return;
    this.signal("SIGTERM");
    this.later(graceMs, () => this.kill(giveUp));
  }

  /** SIGKILL to the run; `giveUp` runs if the output pipes are still open a while later. */
  kill(giveUp: () => void): void {
    if (this.pgid === null) return;
    this.signal("SIGKILL");
    // A process outside the group may still hold the pipes; do not wait for it forever.
    this.later(CLOSE_FALLBACK_MS, giveUp);
  }

  /** The run is over: timers stop, whatever is left of it is killed, the pipes are closed. */
  release(): void {
    this.clearTimers();
    // Whatever is left of the run (background jobs that closed their output) ends with it.
    if (this.pgid !== null) this.run?.signal("SIGKILL");
    // Every pipe to it (a driver's own too, e.g. bwrap's options of a run never let go).
    for (const pipe of this.child?.stdio ?? []) pipe?.destroy();
  }

  /**
   * The run is over: release() it, then `report` its end. A run that was ended (a
   * timeout, a cancel) is reported once no process of it is left, not when signalled.
   */
  releaseThenReport(ended: boolean, report: () => void): void {
    this.release();
    if (ended && this.pgid !== null) void this.waitUntilGone(GROUP_GONE_WAIT_MS).then(report);
    else report();
  }

  /** Whether no live process of the run is left (true when it never started). */
  gone(): boolean {
    if (this.run === null || this.pgid === null) return true;
    try {
      return this.run.members().length === 0;
    } catch {
      return false;
    }
  }

  /** Command names of the run's live processes; empty when it never started or cannot be told. */
  members(): string[] {
    if (this.run === null || this.pgid === null) return [];
    try {
      return this.run.members();
    } catch {
      return [];
    }
  }

  /** Resolves once no process of the run is left, or after `timeoutMs` (a process stuck in the kernel). */
  async waitUntilGone(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.gone()) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, GROUP_GONE_POLL_MS));
    }
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

const NOT_SET_UP = "sbx: the sandbox could not be set up: ";

/** What a run's stderr says when its sandbox could not be set up (the command never ran). */
export function sandboxStartFailureMessage(cause: string): string {
  return `${NOT_SET_UP}${cause}`;
}

/** The cause in such a run's stderr (its last line of that form), or the stderr itself. */
export function sandboxStartFailureCause(stderr: string): string {
  const line = stderr
    .split("\n")
    .reverse()
    .find((l) => l.startsWith(NOT_SET_UP));
  return line === undefined ? stderr.trim() : line.slice(NOT_SET_UP.length);
}

/** What a shell would answer for a command that could not be started: 127 not found, else 126. */
export function spawnFailure(program: string, err: SpawnError): { exitCode: 126 | 127; message: Buffer } {
  const notFound = err.code === "ENOENT";
  const why = notFound
    ? "command not found"
    : err.code === "EACCES"
      ? "permission denied"
      : err.code === "EISDIR"
        ? "is a directory"
        : err.message;
  return { exitCode: notFound ? 127 : 126, message: Buffer.from(`sbx: ${program}: ${why}\n`) };
}
