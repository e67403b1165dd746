// One run (an execution, a process run, a job) on the Slurm driver: a step in its
// sandbox's allocation, `srun --jobid J --overlap`, run on the node Slurm chose.
//
// The leader is spawned at once, on the daemon's machine, in a process group of its own:
// a small shell that waits on a pipe (fd 3) for the allocation's job id and then becomes
// srun (exec: same pid, same group). So the run has its pid from the start, while the
// allocation may still be queued; if the allocation cannot be had, the pipe says so and
// the command never ran (startFailure). srun forwards the command's stdio and ends with
// its exit status; srun's own messages ("srun: error: …") are held back from the output
// and read for how the command ended (a signal, or the allocation gone).

import { type ChildProcess, spawn } from "node:child_process";
import os from "node:os";
import type { Writable } from "node:stream";
import type { CommandEnd, SandboxChild } from "../driver.js";
import { unmeasured } from "../limits/usage.js";
import { runMembers, signalProcessGroup } from "../proc.js";
import type { SlurmCluster } from "./cluster.js";

/** Waits for the job id on fd 3, then is srun ("$0" and "$@") in that allocation. */
const LEADER_SCRIPT = [
  "read -r job <&3 || exit 125",
  "exec 3<&-",
  'case "$job" in ""|*[!0-9]*) exit 125;; esac',
  'exec "$0" --jobid="$job" "$@"',
].join("\n");

export interface StepRequest {
  /** srun's options after --jobid (--overlap, --job-name, --chdir…) and the command after `--`. */
  srunArgs: string[];
  stdin: boolean;
  /** The step's name (srun --job-name): how its step id is found to signal it. */
  name: string;
  /** Resolves the allocation's job id once it runs; rejects saying why it cannot be had. */
  allocation: Promise<string>;
  /** The allocation was found gone when the step started (srun could not confirm it). */
  onAllocationGone: () => void;
}

export class SlurmStep implements SandboxChild {
  readonly process: ChildProcess;
  readonly started: Promise<boolean>;
  private jobId: string | null = null;
  private stepId: string | null = null;
  private failure: string | null = null;
  private readonly srunSaid: string[] = [];
  private stderrEnded: Promise<void>;
  private readonly listeners: Array<(stream: "stdout" | "stderr", chunk: Buffer) => void> = [];
  private pending = "";

  constructor(
    private readonly cluster: SlurmCluster,
    private readonly req: StepRequest,
  ) {
    this.process = spawn("/bin/sh", ["-c", LEADER_SCRIPT, cluster.program("srun"), ...req.srunArgs], {
      env: cluster.env,
      cwd: "/",
      detached: true,
      stdio: [req.stdin ? "pipe" : "ignore", "pipe", "pipe", "pipe"],
    });
    this.stderrEnded = new Promise((resolve) => {
      if (this.process.stderr === null) return resolve();
      this.process.stderr.on("end", resolve);
      this.process.stderr.on("close", resolve);
    });
    this.process.stdout?.on("data", (chunk: Buffer) => this.emit("stdout", chunk));
    this.process.stderr?.on("data", (chunk: Buffer) => this.filterStderr(chunk));
    this.process.stderr?.on("end", () => this.flushStderr());
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
        const sent = this.cluster.runSync("scancel", [
          "--quiet",
          `--signal=${signal.replace(/^SIG/, "")}`,
          this.stepId,
        ]);
        if (sent.code === 0 && signal !== "SIGKILL") return true;
      }
    }
    return signalProcessGroup(pid, signal);
  }

  commandEnd(code: number | null, signal: NodeJS.Signals | null, done: (end: CommandEnd) => void): void {
    void this.stderrEnded.then(() => done(this.ending(code, signal)));
  }

  members(): string[] {
    return this.process.pid === undefined ? [] : runMembers(this.process.pid).map((p) => p.name);
  }

  proceed(): void {
    // Never held: the leader waits for its allocation by itself.
  }

  /** How the command ended, from srun's status and what srun said. */
  private ending(code: number | null, signal: NodeJS.Signals | null): CommandEnd {
    // What a step used is the node's to measure (sstat/sacct): not read yet.
    const none = { endReason: null, usage: unmeasured("a step on a Slurm node is not measured yet") };
    if (this.failure !== null) return { code, signal, startFailure: this.failure, endReason: null, usage: null };
    const said = this.srunSaid.join("\n");
    if (/Unable to confirm allocation|Invalid job id|Job has expired|Expired or invalid job/i.test(said)) {
      this.req.onAllocationGone();
      return {
        code,
        signal,
        startFailure: `the allocation is gone: ${this.srunSaid[0] ?? ""}`,
        endReason: null,
        usage: null,
      };
    }
    // "srun: error: NODE: task 0: Killed": the command ended by a signal; srun exits 128+N.
    const task = /task 0: (.+)$/m.exec(said)?.[1] ?? "";
    if (code !== null && code > 128 && !/^Exited with exit code/.test(task) && task !== "") {
      const name = Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0];
      if (name !== undefined) return { code: null, signal: name as NodeJS.Signals, startFailure: null, ...none };
    }
    return { code, signal, startFailure: null, ...none };
  }

  private emit(stream: "stdout" | "stderr", chunk: Buffer): void {
    for (const l of this.listeners) l(stream, chunk);
  }

  /** Whole lines of stderr: srun's and slurmstepd's own are held back, the command's passed on. */
  private filterStderr(chunk: Buffer): void {
    this.pending += chunk.toString("latin1");
    const end = this.pending.lastIndexOf("\n");
    if (end < 0) return;
    const lines = this.pending.slice(0, end + 1);
    this.pending = this.pending.slice(end + 1);
    this.passLines(lines);
  }

  private flushStderr(): void {
    if (this.pending !== "") this.passLines(this.pending);
    this.pending = "";
  }

  private passLines(text: string): void {
    let kept = "";
    for (const line of text.split(/(?<=\n)/)) {
      if (/^(srun|slurmstepd(-[^:]*)?): /.test(line)) this.srunSaid.push(line.trim());
      else kept += line;
    }
    if (kept !== "") this.emit("stderr", Buffer.from(kept, "latin1"));
  }
}
