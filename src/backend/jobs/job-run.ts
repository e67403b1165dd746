// How a job's command is started and ended: the one place where jobs touch
// processes. A JobRun is the job's own process group (process-group.ts, as
// executions and supervised processes are started), with the environment built as
// for executions, stdin written once, the group ended at the timeout or on cancel
// (TERM, then KILL after a grace), and the processes its main process left behind
// named before they are killed. endLostJobGroup does restart recovery's part: what
// an earlier run of the backend left is inspected and killed. Everything else of
// jobs (scheduling, output, state) is independent of how the process is spawned.

import fs from "node:fs";
import type { JobStream } from "../../protocol/jobs.js";
import { BASE_PATH } from "../executions.js";
import {
  groupMembers,
  LEADER_EXIT_LINGER_MS,
  ProcessGroup,
  signalProcessGroup,
  spawnFailure,
  waitForGroupGone,
} from "../process-group.js";
import type { RunEnd, RunEnding } from "./schedule.js";

export interface JobRunSpec {
  /** argv[0] is the program; a shell command arrives here as ["/bin/sh", "-c", command]. */
  argv: string[];
  /** Real directory on this host. */
  cwd: string;
  env: Record<string, string>;
  /** Bytes written once to stdin, then closed; null: stdin is /dev/null. */
  stdin: Buffer | null;
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL to the group. */
  killGraceMs: number;
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

/** The environment of a job's command: a clean one (never the daemon's), then the request's. */
export function jobEnvironment(spec: {
  sandboxId: string;
  jobId: string;
  workspaceDir: string;
  cwd: string;
  env: Record<string, string>;
}): Record<string, string> {
  return {
    PATH: BASE_PATH,
    HOME: spec.workspaceDir,
    LANG: "C.UTF-8",
    PWD: spec.cwd,
    SBX_SANDBOX_ID: spec.sandboxId,
    SBX_JOB_ID: spec.jobId,
    ...spec.env,
  };
}

/** A group that was ended: how long to wait for its last process to disappear. */
const GROUP_GONE_WAIT_MS = 5000;

export class JobRun {
  readonly startedAt = new Date();
  /** Resolves once the run is over (or never, once abandoned). */
  readonly done: Promise<JobRunResult>;

  private resolveDone!: (result: JobRunResult) => void;
  private readonly group = new ProcessGroup();
  private exit: { code: number | null; signal: string | null } | null = null;
  private ending: RunEnding | null = null;
  private settled = false;
  /** What was left of the group just before the leader-exit linger killed it. */
  private lingering: string[] = [];

  constructor(private readonly spec: JobRunSpec) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    if (spec.cwdProblem !== undefined) {
      this.failWith(126, `sbx: ${spec.cwdProblem}\n`);
      return;
    }
    const started = this.group.spawn({
      argv: spec.argv,
      cwd: spec.cwd,
      env: spec.env,
      stdin: spec.stdin !== null,
      onOutput: spec.onOutput,
      onSpawnError: (program, err) => this.failToStart(program, err),
      onExit: (code, signal) => {
        this.exit = { code, signal };
        spec.onMainExit({ exitCode: code, signal, ending: this.ending });
        // Registered before ProcessGroup's own linger timer of the same length, so it
        // fires first: what is alive then is what that timer's SIGKILL ends.
        this.group.later(LEADER_EXIT_LINGER_MS, () => {
          this.lingering = this.members();
        });
      },
      onEnd: (code, signal) => {
        this.exit ??= { code, signal };
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
    if (this.pgid === null) return [];
    try {
      return groupMembers(this.pgid);
    } catch {
      return [];
    }
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    // The main process has exited: whatever is still in its group was left behind by it.
    const leftovers = this.exit === null ? [] : [...this.lingering, ...this.members()];
    this.group.release();
    const resolve = () =>
      this.resolveDone({
        exitCode: this.exit?.code ?? null,
        signal: this.exit?.signal ?? null,
        ending: this.ending,
        leftovers,
        startedAt: this.startedAt,
        finishedAt: new Date(),
      });
    // An ended (cancelled, timed out) run is over once its group is gone, not when signalled.
    if (this.ending !== null && this.pgid !== null) void waitForGroupGone(this.pgid, GROUP_GONE_WAIT_MS).then(resolve);
    else resolve();
  }

  /** Nothing ran: answer like a shell would (127 not found, 126 not executable). */
  private failToStart(program: string, err: NodeJS.ErrnoException): void {
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

export interface LostGroup {
  /** The job's main process was still running (it was killed with its group). */
  mainAlive: boolean;
  /** Command names of the other processes of the group, killed now. */
  killed: string[];
}

/**
 * Ends the process group of a job that an earlier run of the backend left running.
 * If the leader's pid now belongs to another process (another start time), the
 * group is gone: the kernel does not reuse a pid that still names a process group.
 */
export function endLostJobGroup(pgid: number, leaderStartTime: string | null): LostGroup {
  const leader = processStat(pgid);
  if (leader !== null && leaderStartTime !== null && leader.startTime !== leaderStartTime) {
    return { mainAlive: false, killed: [] };
  }
  const mainAlive = leader !== null && leader.state !== "Z";
  let members: string[] = [];
  try {
    members = groupMembers(pgid);
  } catch {
    members = [];
  }
  signalProcessGroup(pgid, "SIGKILL");
  if (mainAlive) {
    // The main process is the job itself, not something it left behind.
    const i = members.indexOf(leader.comm);
    if (i >= 0) members.splice(i, 1);
  }
  return { mainAlive, killed: members };
}

/** State, start time and command name of a process (Linux /proc), or null when it is gone. */
function processStat(pid: number): { state: string; startTime: string; comm: string } | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Fields after "(comm)": state is field 3, starttime is field 22.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    state: fields[0] ?? "",
    startTime: fields[19] ?? "",
    comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
  };
}
