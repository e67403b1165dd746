// A run on the Slurm driver followed again by a restarted daemon (docs/drivers.md,
// "A daemon restart"): the step the killed daemon started still runs on its node, or
// ended meanwhile; its files on the shared directory (run-files.ts) say the rest of its
// output and how it ended. The daemon polls: the output files as they grow, and, once
// srun on this machine is gone, whether Slurm still lists the step (squeue -s). When the
// step is over its end is the wrapper's `status`; without one (the step was sent KILL,
// or the node failed) what srun said, or else it is lost, with Slurm's state of the
// allocation and its node.

import type { FollowedEnd, FollowedRun, StreamBytes } from "../driver.js";
import { oneLine, type SlurmCluster } from "./cluster.js";
import type { RunFiles } from "./run-files.js";
import { signalStep, StepOutput, srunEnding } from "./step.js";

/** How often a followed run is looked at. */
export const FOLLOW_MS = 250;

export class FollowedStep implements FollowedRun {
  readonly ended: Promise<FollowedEnd>;
  private resolve!: (end: FollowedEnd) => void;
  private readonly listeners: Array<(stream: "stdout" | "stderr", chunk: Buffer) => void> = [];
  private readonly out: StepOutput;
  private readonly timer: NodeJS.Timeout;
  private readonly jobId: string | null;
  private stepId: string | null = null;
  private polling = false;
  private over = false;

  constructor(
    private readonly cluster: SlurmCluster,
    private readonly files: RunFiles,
    private readonly name: string,
    had: StreamBytes,
    private readonly leaderAlive: () => boolean,
  ) {
    this.jobId = files.jobId();
    this.out = new StepOutput(
      files,
      (stream, chunk) => {
        for (const l of this.listeners) l(stream, chunk);
      },
      { ...had },
    );
    this.ended = new Promise((resolve) => {
      this.resolve = resolve;
    });
    // The first look once the follower had its listeners (onOutput).
    this.timer = setInterval(() => void this.poll(), FOLLOW_MS);
    this.timer.unref();
  }

  onOutput(listener: (stream: "stdout" | "stderr", chunk: Buffer) => void): void {
    this.listeners.push(listener);
  }

  signal(signal: NodeJS.Signals): boolean {
    if (this.over || this.jobId === null) return false;
    this.stepId ??= this.cluster.stepNamed(this.jobId, this.name);
    return this.stepId !== null && signalStep(this.cluster, this.stepId, signal);
  }

  stop(): void {
    this.over = true;
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    if (this.polling || this.over) return;
    this.polling = true;
    try {
      this.out.read();
      // srun here waits for the step and ends with it: until then the step runs.
      if (this.leaderAlive()) return;
      const listed = this.jobId === null ? null : await this.stepListed(this.jobId);
      if (listed !== false || this.over) return;
      this.finish(await this.howItEnded());
    } finally {
      this.polling = false;
    }
  }

  /** Whether Slurm lists the step now; null when Slurm does not answer (asked again next time). */
  private async stepListed(jobId: string): Promise<boolean | null> {
    const out = await this.cluster.run("squeue", ["-h", "-s", `--jobs=${jobId}`, "-o", "%i|%j"]);
    if (out.code !== 0) return /Invalid job id/i.test(out.stderr) ? false : null;
    return out.stdout.split("\n").some((line) => line.trim().split("|")[1] === this.name);
  }

  private async howItEnded(): Promise<FollowedEnd> {
    const status = this.files.readStatus();
    if (status !== null) return { ...status, lost: null };
    const said = this.files.srunSaid();
    const fromSrun = srunEnding(said, null);
    if (fromSrun !== null) return { ...fromSrun, lost: null };
    if (this.jobId === null) return { code: null, signal: null, lost: "the step's allocation is not known" };
    const job = await this.cluster.job(this.jobId).catch((err: Error) => err);
    const where =
      job instanceof Error
        ? `Slurm did not say what became of job ${this.jobId}: ${oneLine(job.message)}`
        : job === null
          ? `Slurm no longer knows job ${this.jobId}`
          : `job ${this.jobId} is ${job.state}${job.reason === null ? "" : ` (${job.reason})`}${job.node === null ? "" : ` on node ${job.node}`}`;
    const srun = said.length === 0 ? "" : `; srun said: ${said.slice(-2).join("; ")}`;
    return { code: null, signal: null, lost: `the step ended without saying how: ${where}${srun}` };
  }

  private finish(end: FollowedEnd): void {
    this.stop();
    this.out.finish();
    this.files.remove();
    this.resolve(end);
  }
}
