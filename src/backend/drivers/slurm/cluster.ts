// Talking to a Slurm cluster (docs/drivers.md, "Slurm"): its client commands (sbatch,
// squeue, scancel, scontrol), run with the daemon's own Slurm environment (SLURM_CONF
// and what munge needs), never a command's. Slurm's state is read as squeue's text with
// a delimiter of our choosing (`%i|%T|%r|%N`), not `--json`: the text format is there on
// every Slurm, while `--json` needs the openapi plugins (a package of its own on many
// distributions); the fields read are ids, states and node names, which never hold `|`.

import { execFile, spawnSync } from "node:child_process";
import { findOnPath } from "../bwrap/path-lookup.js";

/** What an administrator configures (sbx daemon run --driver slurm, or the config file). */
export interface SlurmSettings {
  /** The partition sandboxes are allocated in; null: the cluster's default. */
  partition: string | null;
  /** The account allocations are charged to; null: the user's default. */
  account: string | null;
  /** A directory every node sees at the same path: workspaces and the allocations' output live under it. */
  sharedDir: string;
}

/** A job as squeue tells it. */
export interface JobState {
  jobId: string;
  /** PENDING, RUNNING, COMPLETING, … */
  state: string;
  /** Slurm's reason (Resources, Priority, None…). */
  reason: string | null;
  /** The node(s) it runs on; null while pending. */
  node: string | null;
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const CLIENTS = ["sbatch", "squeue", "scancel", "srun", "scontrol"] as const;
type Client = (typeof CLIENTS)[number];

/** Slurm's client commands, found once on the daemon's PATH, run with the daemon's Slurm environment. */
export class SlurmCluster {
  private readonly programs: Partial<Record<Client, string>> = {};
  readonly missing: string[] = [];
  /** The environment Slurm's commands get: the daemon's PATH and Slurm/munge variables, nothing else. */
  readonly env: Record<string, string>;

  constructor(
    readonly settings: SlurmSettings,
    daemonEnv: NodeJS.ProcessEnv,
    searchPath: string,
  ) {
    for (const c of CLIENTS) {
      const found = findOnPath(c, searchPath);
      if (found === null) this.missing.push(c);
      else this.programs[c] = found;
    }
    this.env = { PATH: searchPath };
    for (const [k, v] of Object.entries(daemonEnv)) {
      if (v !== undefined && (k.startsWith("SLURM_CONF") || k === "MUNGE_SOCKET")) this.env[k] = v;
    }
  }

  program(c: Client): string {
    const p = this.programs[c];
    if (p === undefined) throw new Error(`${c} is not installed on the daemon's machine (Slurm's client commands)`);
    return p;
  }

  run(c: Client, args: string[]): Promise<CommandResult> {
    return new Promise((resolve) => {
      execFile(this.program(c), args, { env: this.env, encoding: "utf8" }, (err, stdout, stderr) => {
        const code =
          err === null ? 0 : typeof (err as { code?: unknown }).code === "number" ? (err.code as number) : null;
        resolve({ code, stdout, stderr: stderr || (err !== null && code === null ? err.message : "") });
      });
    });
  }

  runSync(c: Client, args: string[]): CommandResult {
    const out = spawnSync(this.program(c), args, { env: this.env, encoding: "utf8" });
    return { code: out.status, stdout: out.stdout ?? "", stderr: out.stderr ?? out.error?.message ?? "" };
  }

  /** The scheduling options every allocation gets: partition and account. */
  placementArgs(): string[] {
    const { partition, account } = this.settings;
    return [
      ...(partition === null ? [] : [`--partition=${partition}`]),
      ...(account === null ? [] : [`--account=${account}`]),
    ];
  }

  /** The jobs of this name Slurm knows now (pending, running, or ended and still kept); throws when Slurm does not answer. */
  async jobsNamed(name: string): Promise<JobState[]> {
    const out = await this.run("squeue", ["-h", "--states=all", `--name=${name}`, "-o", "%i|%T|%r|%N"]);
    if (out.code !== 0) throw new Error(`squeue: ${oneLine(out.stderr)}`);
    return parseJobs(out.stdout);
  }

  /** A job's state, or null when Slurm no longer knows it. */
  async job(jobId: string): Promise<JobState | null> {
    const out = await this.run("squeue", ["-h", "--states=all", `--jobs=${jobId}`, "-o", "%i|%T|%r|%N"]);
    if (out.code !== 0) {
      if (/Invalid job id/i.test(out.stderr)) return null;
      throw new Error(`squeue: ${oneLine(out.stderr)}`);
    }
    return parseJobs(out.stdout)[0] ?? null;
  }

  /** The step of a job with this name (srun --job-name), as "JOB.STEP", or null. */
  stepNamed(jobId: string, name: string): string | null {
    const out = this.runSync("squeue", ["-h", "-s", `--jobs=${jobId}`, "-o", "%i|%j"]);
    for (const line of out.stdout.split("\n")) {
      const [id, stepName] = line.trim().split("|");
      if (stepName === name && id !== undefined) return id;
    }
    return null;
  }

  /** "slurm 22.05.8", or why Slurm's commands cannot be used here. */
  version(): { version: string | null; problem: string | null } {
    if (this.missing.length > 0) {
      return { version: null, problem: `not installed: ${this.missing.join(", ")} (Debian package slurm-client)` };
    }
    const out = this.runSync("sbatch", ["--version"]);
    return out.code === 0
      ? { version: out.stdout.trim(), problem: null }
      : { version: null, problem: `sbatch --version failed: ${oneLine(out.stderr)}` };
  }
}

/** squeue's `%i|%T|%r|%N` lines. */
export function parseJobs(text: string): JobState[] {
  const jobs: JobState[] = [];
  for (const line of text.split("\n")) {
    const [jobId, state, reason, node] = line.trim().split("|");
    if (!jobId || !state) continue;
    jobs.push({
      jobId,
      state,
      reason: reason === undefined || reason === "" || reason === "None" ? null : reason,
      node: node === undefined || node === "" || node === "(null)" ? null : node,
    });
  }
  return jobs;
}

/** A command's message on one line (Slurm's errors run over several). */
export function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, "; ") || "no message";
}
