// One run (generation) of a supervised process: its own process group (spawned
// like an execution, see runner.ts), output handed on chunk by chunk, an optional
// stdin pipe kept open for later writes, signals to the whole group, and ending
// the group (TERM, then KILL after a grace). A run ends once its leader exited and
// its output pipes closed; whatever is left of the group is then killed.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import type { ProcessStream } from "../protocol/types.js";
import { readProcessStartTime, signalProcessGroup } from "./runner.js";

export interface ProcessRunSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** A pipe for later writes; otherwise stdin is /dev/null. */
  stdin: boolean;
  onOutput: (stream: ProcessStream, chunk: Buffer) => void;
}

export interface RunExit {
  exitCode: number | null;
  signal: string | null;
  startedAt: Date;
  endedAt: Date;
}

/** After the leader exits, how long the rest of the group may hold the output pipes before it is killed. */
const LEADER_EXIT_LINGER_MS = 250;
/** After SIGKILL, how long to wait for the pipes to close before giving up on them. */
const CLOSE_FALLBACK_MS = 1000;

export class StdinError extends Error {
  constructor(
    readonly code: "closed" | "gone",
    message: string,
  ) {
    super(message);
    this.name = "StdinError";
  }
}

export class ProcessRun {
  readonly startedAt = new Date();
  readonly pgid: number | null = null;
  readonly pgidStartTime: string | null = null;
  readonly done: Promise<RunExit>;

  private resolveDone!: (exit: RunExit) => void;
  private readonly child: ChildProcess | null = null;
  private exit: { code: number | null; signal: string | null } | null = null;
  private settled = false;
  private terminating = false;
  private stdinEnded = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly spec: ProcessRunSpec) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
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
      this.failToStart(program, err as NodeJS.ErrnoException);
      return;
    }
    this.child = child;
    if (child.pid === undefined) {
      child.on("error", (err: NodeJS.ErrnoException) => this.failToStart(program, err));
      return;
    }
    this.pgid = child.pid;
    this.pgidStartTime = readProcessStartTime(child.pid);
    child.stdout?.on("data", (chunk: Buffer) => spec.onOutput("stdout", chunk));
    child.stderr?.on("data", (chunk: Buffer) => spec.onOutput("stderr", chunk));
    child.stdin?.on("error", () => {
      // EPIPE when the command exits or closes its stdin; writes report it themselves.
    });
    child.on("error", () => {
      // Signalling errors after start; the end comes from 'exit'/'close'.
    });
    child.once("exit", (code, signal) => {
      this.exit = { code, signal };
      this.later(LEADER_EXIT_LINGER_MS, () => this.killGroupThenFinish());
    });
    child.once("close", (code, signal) => {
      this.exit ??= { code, signal };
      this.finish();
    });
  }

  get ended(): boolean {
    return this.settled;
  }

  /** Whether stdin is a pipe that can still be written. */
  get stdinOpen(): boolean {
    return !!this.child?.stdin && !this.stdinEnded && !this.settled;
  }

  /** Writes to stdin; resolves once the bytes are handed to the pipe. Throws StdinError. */
  writeStdin(data: Buffer): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.settled) return Promise.reject(new StdinError("gone", "the process is not running"));
    if (this.stdinEnded) return Promise.reject(new StdinError("closed", "stdin was closed (eof) for this run"));
    if (data.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      stdin.write(data, (err) => {
        if (err) reject(new StdinError("gone", `stdin could not be written: ${err.message}`));
        else resolve();
      });
    });
  }

  /** Closes stdin (the command reads end of file). */
  endStdin(): void {
    if (this.stdinEnded) return;
    this.stdinEnded = true;
    this.child?.stdin?.end();
  }

  /** Sends a signal to the whole group; false when it is gone. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.pgid === null || this.settled) return false;
    return signalProcessGroup(this.pgid, signal);
  }

  /** Ends the group: SIGTERM now, SIGKILL after `graceMs`. */
  terminate(graceMs: number): void {
    if (this.settled || this.terminating || this.pgid === null) return;
    this.terminating = true;
    signalProcessGroup(this.pgid, "SIGTERM");
    this.later(graceMs, () => this.killGroupThenFinish());
  }

  /** Forgets the process without ending it, as a crash would. */
  abandon(): void {
    if (this.settled) return;
    this.settled = true;
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

  private killGroupThenFinish(): void {
    if (this.settled || this.pgid === null) return;
    signalProcessGroup(this.pgid, "SIGKILL");
    // A process outside the group may still hold the pipes; do not wait for it forever.
    this.later(CLOSE_FALLBACK_MS, () => this.finish());
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.clearTimers();
    // Whatever is left of the group (background jobs that closed their output) ends with it.
    if (this.pgid !== null) signalProcessGroup(this.pgid, "SIGKILL");
    this.child?.stdin?.destroy();
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.resolveDone({
      exitCode: this.exit?.code ?? null,
      signal: this.exit?.signal ?? null,
      startedAt: this.startedAt,
      endedAt: new Date(),
    });
  }

  /** Nothing ran: answer like a shell would (127 not found, 126 not executable). */
  private failToStart(program: string, err: NodeJS.ErrnoException): void {
    if (this.settled) return;
    const notFound = err.code === "ENOENT";
    if (notFound && !isDirectory(this.spec.cwd)) {
      this.spec.onOutput("stderr", Buffer.from(`sbx: working directory ${this.spec.cwd} does not exist\n`));
      this.exit = { code: 126, signal: null };
      this.finish();
      return;
    }
    const why = notFound ? "command not found" : err.code === "EACCES" ? "permission denied" : err.message;
    this.spec.onOutput("stderr", Buffer.from(`sbx: ${program}: ${why}\n`));
    this.exit = { code: notFound ? 127 : 126, signal: null };
    this.finish();
  }

  private later(ms: number, fn: () => void): void {
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

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
