// One run (generation) of a supervised process: its own process group (spawned
// like an execution, see drivers/process-group.ts), output handed on chunk by chunk, an optional
// stdin pipe kept open for later writes, signals to the whole group, and ending
// the group (TERM, then KILL after a grace). A run ends once its leader exited and
// its output pipes closed; whatever is left of the group is then killed.

import fs from "node:fs";
import type { CommandUsage, EndReason, ProcessStream } from "../../protocol/types.js";
import type { TerminalSize } from "../../platform/pty.js";
import type { RunTerminal } from "../runs/index.js";
import {
  ProcessGroup,
  type SandboxDriver,
  type SandboxPlacement,
  type SpawnError,
  sandboxStartFailureMessage,
  spawnFailure,
} from "../drivers/index.js";

export interface ProcessRunSpec {
  driver: SandboxDriver;
  placement: SandboxPlacement;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** A pipe for later writes; otherwise stdin is /dev/null. */
  stdin: boolean;
  /** On a terminal of this size (stdin is the terminal then). */
  terminal?: TerminalSize;
  onOutput: (stream: ProcessStream, chunk: Buffer) => void;
  /** The command's own host pid, learnt after the spawn (a live sandbox's run): the run's os_pid from then on. */
  onCommandPid?: (pid: number) => void;
  /** The clock the run's start and end are read from. */
  now: () => number;
  /** Set when the working directory may not be used (it leads outside the workspace): nothing starts, exit 126. */
  cwdProblem?: string;
}

export interface RunExit {
  exitCode: number | null;
  signal: string | null;
  /** The sandbox could not be set up: the command never ran (why; its stderr says so too). */
  startFailure: string | null;
  /** Why the command ended beyond its exit: `out_of_memory` (its sandbox's memory limit), else null. */
  endReason: EndReason | null;
  /** What the run used (docs/operations.md); null: it never started. */
  usage: CommandUsage | null;
  startedAt: Date;
  endedAt: Date;
}

/**
 * Bytes written to stdin that the command has not read yet, beyond which a write is
 * refused (StdinError "busy") instead of queued. A write to a drained pipe is always taken.
 */
export const STDIN_PENDING_LIMIT = 1024 * 1024;

export class StdinError extends Error {
  constructor(
    readonly code: "closed" | "gone" | "busy",
    message: string,
  ) {
    super(message);
    this.name = "StdinError";
  }
}

export class ProcessRun {
  readonly startedAt: Date;
  readonly done: Promise<RunExit>;

  private resolveDone!: (exit: RunExit) => void;
  private readonly group = new ProcessGroup();
  private exit: { code: number | null; signal: string | null } | null = null;
  /** Why the sandbox could not be set up (the command never ran), or null. */
  private startFailure: string | null = null;
  private settled = false;
  private terminating = false;
  private stdinEnded = false;

  constructor(private readonly spec: ProcessRunSpec) {
    this.startedAt = new Date(spec.now());
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    if (spec.cwdProblem !== undefined) {
      spec.onOutput("stderr", Buffer.from(`sbx: ${spec.cwdProblem}\n`));
      this.exit = { code: 126, signal: null };
      this.finish();
      return;
    }
    this.group.spawn({
      driver: spec.driver,
      placement: spec.placement,
      argv: spec.argv,
      cwd: spec.cwd,
      env: spec.env,
      stdin: spec.stdin,
      ...(spec.terminal !== undefined && { terminal: spec.terminal }),
      onOutput: spec.onOutput,
      ...(spec.onCommandPid && { onCommandPid: spec.onCommandPid }),
      onSpawnError: (program, err) => this.failToStart(program, err),
      onExit: (code, signal, startFailure) => {
        this.exit = { code, signal };
        if (startFailure !== null) this.notSetUp(startFailure);
      },
      onEnd: (code, signal, startFailure) => {
        this.exit ??= { code, signal };
        if (startFailure !== null) this.notSetUp(startFailure);
        this.finish();
      },
    });
  }

  get pgid(): number | null {
    return this.group.pgid;
  }

  /** The command's own host pid once known (os_pid). */
  get commandPid(): number | null {
    return this.group.commandPid;
  }

  get pgidStartTime(): string | null {
    return this.group.pgidStartTime;
  }

  get ended(): boolean {
    return this.settled;
  }

  /** The run's terminal (a run spawned on one) while it runs; null otherwise. */
  get terminal(): RunTerminal | null {
    const control = this.group.terminal;
    const input = this.group.child?.stdin;
    if (control === null || !input || this.settled) return null;
    return { input, resize: (size) => control.resize(size) };
  }

  /** Whether stdin is a pipe that can still be written. */
  get stdinOpen(): boolean {
    return !!this.group.child?.stdin && !this.stdinEnded && !this.settled;
  }

  /** Bytes written to stdin and not yet taken by the pipe. */
  get stdinPending(): number {
    return this.group.child?.stdin?.writableLength ?? 0;
  }

  /**
   * Writes to stdin; resolves once the bytes are queued for the pipe, without waiting
   * for the command to read them (it may never). Refused with StdinError "busy",
   * nothing written, while earlier bytes wait and these would exceed STDIN_PENDING_LIMIT.
   */
  writeStdin(data: Buffer): Promise<void> {
    const stdin = this.group.child?.stdin;
    if (!stdin || this.settled) return Promise.reject(new StdinError("gone", "the process is not running"));
    if (this.stdinEnded) return Promise.reject(new StdinError("closed", "stdin was closed (eof) for this run"));
    if (stdin.destroyed) return Promise.reject(new StdinError("gone", "stdin of this run is closed"));
    if (data.length === 0) return Promise.resolve();
    const pending = stdin.writableLength;
    if (pending > 0 && pending + data.length > STDIN_PENDING_LIMIT) {
      return Promise.reject(
        new StdinError("busy", `${pending} bytes written earlier are not read yet; nothing was written, try again`),
      );
    }
    return new Promise((resolve, reject) => {
      let answered = false;
      stdin.write(data, (err) => {
        if (answered) return;
        answered = true;
        if (err) reject(new StdinError("gone", `stdin could not be written: ${err.message}`));
        else resolve();
      });
      // Queued: a pipe that refused them (EPIPE) says so by now; otherwise they wait for the reader.
      setImmediate(() => {
        if (answered) return;
        answered = true;
        if (stdin.destroyed || stdin.errored) reject(new StdinError("gone", "stdin could not be written"));
        else resolve();
      });
    });
  }

  /** Closes stdin (the command reads end of file). */
  endStdin(): void {
    if (this.stdinEnded) return;
    this.stdinEnded = true;
    this.group.child?.stdin?.end();
  }

  /** Sends a signal to the whole group; false when it is gone. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.settled) return false;
    return this.group.signal(signal);
  }

  /** Ends the group: SIGTERM now, SIGKILL after `graceMs`. */
  terminate(graceMs: number): void {
    if (this.settled || this.terminating || this.pgid === null) return;
    this.terminating = true;
    this.group.terminate(graceMs, () => this.finish());
  }

  /** Forgets the process without ending it, as a crash would. */
  abandon(): void {
    if (this.settled) return;
    this.settled = true;
    this.group.abandon();
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.group.release();
    const notSetUp = this.startFailure !== null;
    this.resolveDone({
      exitCode: notSetUp ? null : (this.exit?.code ?? null),
      signal: notSetUp ? null : (this.exit?.signal ?? null),
      startFailure: this.startFailure,
      endReason: notSetUp ? null : this.group.endReason,
      usage: notSetUp ? null : this.group.usage,
      startedAt: this.startedAt,
      endedAt: new Date(this.spec.now()),
    });
  }

  /** The sandbox could not be set up: nothing ran; its stderr says why (once). */
  private notSetUp(cause: string): void {
    if (this.startFailure !== null) return;
    this.startFailure = cause;
    this.spec.onOutput("stderr", Buffer.from(`${sandboxStartFailureMessage(cause)}\n`));
  }

  /** Whether the run's command started (false: nothing spawned, or its sandbox not set up). */
  get started(): Promise<boolean> {
    return this.group.started;
  }

  /** Nothing ran: answer like a shell would (127 not found, 126 not executable), or the sandbox was not set up. */
  private failToStart(program: string, err: SpawnError): void {
    if (this.settled) return;
    if (err.code === "EBWRAP") {
      this.notSetUp(err.message);
      this.finish();
      return;
    }
    if (err.code === "ENOENT" && !isDirectory(this.spec.cwd)) {
      this.spec.onOutput("stderr", Buffer.from(`sbx: working directory ${this.spec.cwd} does not exist\n`));
      this.exit = { code: 126, signal: null };
      this.finish();
      return;
    }
    const { exitCode, message } = spawnFailure(program, err);
    this.spec.onOutput("stderr", message);
    this.exit = { code: exitCode, signal: null };
    this.finish();
  }
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
