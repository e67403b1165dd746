// How a job's command is started and ended: the one place where jobs touch
// processes. A JobRun is a run on its sandbox's driver (drivers/driver.ts, as
// executions and supervised processes are started), with the clean command
// environment, stdin written once, the run ended at the timeout or on cancel (TERM,
// then KILL after a grace), and the processes its main process left behind named
// before they are killed (under bwrap the sandbox's pid namespace ends them with the
// main process, before they can be named). Everything else of jobs (scheduling,
// output, state, restart recovery) is independent of how the process is spawned.

import type { JobStream } from "../../protocol/jobs.js";
import {
  bootId,
  LEADER_EXIT_LINGER_MS,
  leaderOf,
  type OneShotCommand,
  ProcessGroup,
  sandboxStartFailureMessage,
  spawnFailure,
  type SpawnError,
} from "../drivers/index.js";
import type { RunEnd, RunEnding } from "./schedule.js";

export interface JobRunSpec extends OneShotCommand {
  /** Between SIGTERM and SIGKILL to the group. */
  killGraceMs: number;
  /** The clock the run's start and end are read from. */
  now: () => number;
  /**
   * Set when the working directory may not be used (missing, or leading out of the
   * workspace; the caller checks it): nothing starts, exit 126 with this on stderr.
   */
  cwdProblem?: string;
  onOutput: (stream: JobStream, chunk: Buffer) => void;
  /** The main process exited (its status is the job's); the rest of the group is being wrapped up. */
  onMainExit: (end: RunEnd) => void;
}

export interface JobRunResult extends RunEnd {
  /** Command names of processes left behind by the main process, killed when the run was wrapped up. */
  leftovers: string[];
  startedAt: Date;
  finishedAt: Date;
}

export class JobRun {
  readonly startedAt: Date;
  /** Resolves once the run is over (or never, once abandoned). */
  readonly done: Promise<JobRunResult>;

  private resolveDone!: (result: JobRunResult) => void;
  private readonly group = new ProcessGroup();
  private exit: { code: number | null; signal: string | null } | null = null;
  /** Why the sandbox could not be set up (the command never ran), or null. */
  private startFailure: string | null = null;
  private ending: RunEnding | null = null;
  private settled = false;
  /** What was left of the group just before the leader-exit linger killed it. */
  private lingering: string[] = [];

  constructor(private readonly spec: JobRunSpec) {
    this.startedAt = new Date(spec.now());
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    if (spec.cwdProblem !== undefined) {
      this.failWith(126, `sbx: ${spec.cwdProblem}\n`);
      return;
    }
    const started = this.group.spawn({
      ...leaderOf(spec),
      onOutput: spec.onOutput,
      onSpawnError: (program, err) => this.failToStart(program, err),
      onExit: (code, signal, startFailure) => {
        this.exit = { code, signal };
        if (startFailure !== null) this.notSetUp(startFailure);
        spec.onMainExit({
          exitCode: code,
          signal,
          ending: this.ending,
          startFailure: this.startFailure,
          endReason: this.group.endReason,
          usage: this.group.usage,
          interrupted: this.group.interrupted,
        });
        // Registered before ProcessGroup's own linger timer of the same length, so it
        // fires first: what is alive then is what that timer's SIGKILL ends.
        this.group.later(LEADER_EXIT_LINGER_MS, () => {
          this.lingering = this.members();
        });
      },
      onEnd: (code, signal, startFailure) => {
        this.exit ??= { code, signal };
        if (startFailure !== null) this.notSetUp(startFailure);
        this.finish();
      },
    });
    if (!started) return;
    if (spec.stdin) this.group.child?.stdin?.end(spec.stdin);
    this.group.later(spec.timeoutMs, () => this.end("timed_out"));
  }

  /** The job's process group, or null when nothing could be started. */
  get pgid(): number | null {
    return this.group.pgid;
  }

  /** Start time of the group leader (from /proc), to recognise the group after a restart. */
  get pgidStartTime(): string | null {
    return this.group.pgidStartTime;
  }

  /** The boot the group was started in, to never signal a group of another boot. */
  get bootId(): string | null {
    return this.group.pgid === null ? null : bootId();
  }

  /**
   * Ends the run: TERM to the group, KILL after the grace. Once the main process
   * exited, its exit stands and only the wrapping up is left. Done resolves once no
   * live process is left in the group.
   */
  end(reason: RunEnding): void {
    if (this.settled || this.ending !== null || this.pgid === null || this.exit !== null) return;
    this.ending = reason;
    this.group.terminate(this.spec.killGraceMs, () => this.finish());
  }

  /** Forgets the process without ending it, as a crash would. */
  abandon(): void {
    if (this.settled) return;
    this.settled = true;
    this.group.abandon();
  }

  private members(): string[] {
    return this.group.members();
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    // The main process has exited: whatever is still in its group was left behind by it.
    const leftovers = this.exit === null ? [] : [...this.lingering, ...this.members()];
    this.group.releaseThenReport(this.ending !== null, () =>
      this.resolveDone({
        exitCode: this.startFailure !== null ? null : (this.exit?.code ?? null),
        signal: this.startFailure !== null ? null : (this.exit?.signal ?? null),
        ending: this.ending,
        startFailure: this.startFailure,
        endReason: this.ending === null && this.startFailure === null ? this.group.endReason : null,
        usage: this.group.usage,
        interrupted: this.group.interrupted,
        leftovers,
        startedAt: this.startedAt,
        finishedAt: new Date(this.spec.now()),
      }),
    );
  }

  /** The sandbox could not be set up: nothing ran; its output says why (once). */
  private notSetUp(cause: string): void {
    if (this.startFailure !== null) return;
    this.startFailure = cause;
    this.spec.onOutput("stderr", Buffer.from(`${sandboxStartFailureMessage(cause)}\n`));
  }

  /** Nothing ran: answer like a shell would (127 not found, 126 not executable), or the sandbox was not set up. */
  private failToStart(program: string, err: SpawnError): void {
    if (err.code === "EBWRAP") {
      if (this.settled) return;
      this.notSetUp(err.message);
      this.spec.onMainExit({ exitCode: null, signal: null, ending: null, startFailure: err.message });
      this.finish();
      return;
    }
    const { exitCode, message } = spawnFailure(program, err);
    this.failWith(exitCode, message.toString());
  }

  private failWith(exitCode: number, message: string): void {
    if (this.settled) return;
    this.spec.onOutput("stderr", Buffer.from(message));
    this.exit = { code: exitCode, signal: null };
    this.spec.onMainExit({ exitCode, signal: null, ending: null });
    this.finish();
  }
}
