// One run (an execution, a process run, a job) on the Slurm driver: a step in its
// sandbox's allocation, `srun --jobid J --overlap`, run on the node Slurm chose.
//
// The leader is spawned at once, on the daemon's machine, in a process group of its own:
// a small shell that waits on a pipe (fd 3) for the allocation's job id, writes it to the
// run's files and then becomes srun (exec: same pid, same group). So the run has its pid
// from the start, while the allocation may still be queued; if the allocation cannot be
// had, the pipe says so and the command never ran (startFailure).
//
// Nothing of srun is a pipe to the daemon but stdin (when there is one): the command's
// output goes to files on the shared directory (srun --output/--error, written on the
// node), srun's own messages to a file beside them, and the command's end to `status`
// (run-files.ts). The daemon reads the files as they grow; a daemon killed meanwhile
// takes nothing with it, and the one started next reads the rest (reattach.ts).

import { type ChildProcess, spawn } from "node:child_process";
import type { Writable } from "node:stream";
import type { CommandEnd, SandboxChild } from "../driver.js";
import { unmeasured } from "../limits/usage.js";
import { runMembers, signalProcessGroup } from "../proc.js";
import type { SlurmCluster } from "./cluster.js";
import { FileTail, type RunFiles, signalName } from "./run-files.js";

/** Waits for the job id on fd 3, then is srun ("$0" and "$@") in that allocation. */
const LEADER_SCRIPT = [
  "read -r job <&3 || exit 125",
  "exec 3<&-",
  'case "$job" in ""|*[!0-9]*) exit 125;; esac',
  'printf \'%s\\n\' "$job" >"$SBX_RUN_DIR/job" || exit 125',
  'exec "$0" --jobid="$job" "$@" >>"$SBX_RUN_DIR/srun" 2>&1',
].join("\n");

/** How often the output files are read while the step runs. */
export const TAIL_MS = 100;

export interface StepRequest {
  /** srun's options after --jobid (--overlap, --job-name, --chdir, --output…) and the command after `--`. */
  srunArgs: string[];
  stdin: boolean;
  /** The step's name (srun --job-name): how its step id is found to signal it. */
  name: string;
  /** Where its output, status and srun's messages go (created before the spawn). */
  files: RunFiles;
  /** Resolves the allocation's job id once it runs; rejects saying why it cannot be had. */
  allocation: Promise<string>;
  /** The allocation was found gone when the step started (srun could not confirm it), or failed under it. */
  onAllocationGone: () => void;
  /** The node the allocation last ran on, as the driver saw it (named when it failed). */
  lastNode: () => string | null;
}

/** States of an allocation that failed under its steps: they did not end by themselves. */
const FAILED_UNDER = new Set(["NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD"]);

/** srun's messages saying the allocation was not there to run the step in. */
export const ALLOCATION_GONE = /Unable to confirm allocation|Invalid job id|Job has expired|Expired or invalid job/i;

export class SlurmStep implements SandboxChild {
  readonly process: ChildProcess;
  readonly started: Promise<boolean>;
  private jobId: string | null = null;
  private stepId: string | null = null;
  private failure: string | null = null;
  private readonly listeners: Array<(stream: "stdout" | "stderr", chunk: Buffer) => void> = [];
  private readonly out: StepOutput;
  private readonly timer: NodeJS.Timeout;
  private drained: Promise<void> | null = null;

  constructor(
    private readonly cluster: SlurmCluster,
    private readonly req: StepRequest,
  ) {
    this.out = new StepOutput(req.files, (stream, chunk) => this.emit(stream, chunk));
    this.process = spawn("/bin/sh", ["-c", LEADER_SCRIPT, cluster.program("srun"), ...req.srunArgs], {
      env: { ...cluster.env, SBX_RUN_DIR: req.files.dir },
      cwd: "/",
      detached: true,
      stdio: [req.stdin ? "pipe" : "ignore", "ignore", "ignore", "pipe"],
    });
    this.timer = setInterval(() => this.out.read(), TAIL_MS);
    this.timer.unref();
    this.process.once("exit", () => clearInterval(this.timer));
    const control = this.process.stdio[3] as Writable | null;
    control?.on("error", () => {});
    this.started = req.allocation.then(
      (jobId) => {
        this.jobId = jobId;
        control?.end(`${jobId}\n`);
        return true;
      },
      (err: unknown) => {
        this.failure = (err as Error).message;
        control?.end("none\n");
        return false;
      },
    );
  }

  onOutput(listener: (stream: "stdout" | "stderr", chunk: Buffer) => void): void {
    this.listeners.push(listener);
  }

  get pgid(): number {
    return this.process.pid ?? -1;
  }

  /**
   * Once the step runs, the signal goes to its processes on the node (scancel --signal
   * of the step); before, or once it is gone, to the leader's group here. KILL ends srun too.
   */
  signal(signal: NodeJS.Signals): boolean {
    const pid = this.process.pid;
    if (pid === undefined) return false;
    const alive = signalProcessGroup(pid, 0);
    if (this.jobId !== null && alive) {
      this.stepId ??= this.cluster.stepNamed(this.jobId, this.req.name);
      if (this.stepId !== null) {
        const sent = signalStep(this.cluster, this.stepId, signal);
        if (sent && signal !== "SIGKILL") return true;
      }
    }
    return signalProcessGroup(pid, signal);
  }

  /** Once srun ended: the rest of the output files read, then how the command ended. */
  commandEnd(code: number | null, signal: NodeJS.Signals | null, done: (end: CommandEnd) => void): void {
    clearInterval(this.timer);
    this.drained ??= Promise.resolve().then(() => this.out.finish());
    void this.drained.then(async () => {
      const failed = await this.failedUnder();
      if (failed === null) return done(this.ending(code, signal));
      this.req.files.remove();
      this.req.onAllocationGone();
      this.emit("stderr", Buffer.from(`sbx: ${failed}\n`));
      done({ code: null, signal: null, startFailure: null, endReason: null, usage: null, interrupted: failed });
    });
  }

  members(): string[] {
    return this.process.pid === undefined ? [] : runMembers(this.process.pid).map((p) => p.name);
  }

  proceed(): void {
    // Never held: the leader waits for its allocation by itself.
  }

  /**
   * When the step left no status or ended by a signal: whether its allocation failed
   * under it (NODE_FAIL, PREEMPTED…, or Slurm no longer knows it), said with its node;
   * null otherwise.
   */
  private async failedUnder(): Promise<string | null> {
    if (this.failure !== null || this.jobId === null) return null;
    // Ended by itself (an exit): its own end. Ended by a signal: Slurm may have sent it as the node failed.
    if (this.req.files.readStatus()?.signal === null) return null;
    const job = await this.cluster.job(this.jobId).catch(() => undefined);
    if (job === undefined) return null;
    const node = job?.node ?? this.req.lastNode();
    const on = node === null ? "" : ` on node ${node}`;
    if (job === null) return `Slurm no longer knows the allocation (job ${this.jobId})${on}: the step ended with it`;
    if (!FAILED_UNDER.has(job.state) && !(job.state === "PENDING" && job.reason !== null)) return null;
    const why = job.reason === null ? "" : ` (${job.reason})`;
    return `the allocation (job ${this.jobId}) is ${job.state}${why}${on}: the step ended with it, its command's own end is not known`;
  }

  /** How the command ended: the wrapper's status when it wrote one, else srun's status and what srun said. */
  private ending(code: number | null, signal: NodeJS.Signals | null): CommandEnd {
    // What a step used is the node's to measure (sstat/sacct): not read yet.
    const none = { endReason: null, usage: unmeasured("a step on a Slurm node is not measured yet") };
    if (this.failure !== null) return { code, signal, startFailure: this.failure, endReason: null, usage: null };
    const said = this.req.files.srunSaid();
    const status = this.req.files.readStatus();
    this.req.files.remove();
    if (status !== null) return { ...status, startFailure: null, ...none };
    if (ALLOCATION_GONE.test(said.join("\n"))) {
      this.req.onAllocationGone();
      return { code, signal, startFailure: `the allocation is gone: ${said[0] ?? ""}`, endReason: null, usage: null };
    }
    const fromSrun = srunEnding(said, code);
    return { ...(fromSrun ?? { code, signal }), startFailure: null, ...none };
  }

  private emit(stream: "stdout" | "stderr", chunk: Buffer): void {
    for (const l of this.listeners) l(stream, chunk);
  }
}

/** scancel --signal of one step ("JOB.STEP"); true when Slurm took it. */
export function signalStep(cluster: SlurmCluster, stepId: string, signal: NodeJS.Signals): boolean {
  const sent = cluster.runSync("scancel", ["--quiet", `--signal=${signal.replace(/^SIG/, "")}`, stepId]);
  return sent.code === 0;
}

/**
 * How the command ended as srun said it, when the wrapper could not write it (the step
 * was sent KILL): "srun: error: NODE: task 0: Killed" is a signal; srun exits 128+N.
 */
export function srunEnding(
  said: string[],
  code: number | null,
): { code: number | null; signal: NodeJS.Signals | null } | null {
  const task = /task 0: (.+)$/m.exec(said.join("\n"))?.[1] ?? "";
  const exited = /^Exited with exit code (\d+)/.exec(task);
  if (exited !== null) return { code: Number(exited[1]), signal: null };
  if (task === "") return null;
  const n = code !== null && code > 128 ? code - 128 : 9;
  const name = /Killed/.test(task) ? "SIGKILL" : signalName(n);
  return name === null ? null : { code: null, signal: name };
}

/**
 * The command's output files as they grow: read from where the last read stopped, the
 * node's own lines (slurmstepd: …) held back from stderr, whole lines at a time there.
 */
export class StepOutput {
  private readonly stdout: FileTail;
  private readonly stderr: FileTail;
  private pending = "";

  constructor(
    files: RunFiles,
    private readonly sink: (stream: "stdout" | "stderr", chunk: Buffer) => void,
    /** Bytes of each stream (as passed on) already had: a restarted daemon's copy has them. */
    private readonly skip: { stdout: number; stderr: number } = { stdout: 0, stderr: 0 },
  ) {
    this.stdout = new FileTail(files.out);
    this.stderr = new FileTail(files.err);
  }

  read(): void {
    const out = this.stdout.read();
    if (out.length > 0) this.emit("stdout", out);
    const err = this.stderr.read();
    if (err.length === 0) return;
    this.pending += err.toString("latin1");
    const end = this.pending.lastIndexOf("\n");
    if (end < 0) return;
    const lines = this.pending.slice(0, end + 1);
    this.pending = this.pending.slice(end + 1);
    this.pass(lines);
  }

  /** The last read, once nothing writes any more. */
  finish(): void {
    this.read();
    if (this.pending !== "") this.pass(this.pending);
    this.pending = "";
  }

  private pass(text: string): void {
    let kept = "";
    for (const line of text.split(/(?<=\n)/)) if (!/^slurmstepd(-[^:]*)?: /.test(line)) kept += line;
    if (kept !== "") this.emit("stderr", Buffer.from(kept, "latin1"));
  }

  private emit(stream: "stdout" | "stderr", chunk: Buffer): void {
    const skipped = Math.min(this.skip[stream], chunk.length);
    this.skip[stream] -= skipped;
    if (skipped < chunk.length) this.sink(stream, chunk.subarray(skipped));
  }
}
