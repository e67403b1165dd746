// A private single-node Slurm cluster for the tests of the Slurm driver (docs/testing.md,
// "Slurm"): a munge key and munged of its own (its own socket), a generated slurm.conf
// (its own ports, found free; its own state and spool directories under a temporary
// directory; the node is this host with its real CPUs and memory), slurmctld and slurmd.
// Started as root (the daemons run as root, SlurmUser=root), ready once `sinfo` says the
// node is idle, stopped by the pids it started. Nothing of the machine's own Slurm or
// munge (/etc/slurm, /run/munge) is read or touched: every command gets SLURM_CONF.
//
// Starting is synchronous (the daemons fork into the background by themselves), so a
// need (requirements.ts) can start the file's cluster while the file is collected.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { atEndOfFile, removeDir, tempDir } from "./temp.js";

export interface SlurmCluster {
  /** The cluster's directory: slurm.conf, munge/, state/, spool/, log/. */
  dir: string;
  /** What a Slurm command needs in its environment to reach this cluster (SLURM_CONF). */
  env: Record<string, string>;
  /** Its one partition (the default). */
  partition: string;
  /** Its one node: this host's short name. */
  node: string;
  /** A directory every node sees (here: one on this host). */
  shared: string;
  /** Runs a Slurm command against this cluster. */
  run(program: string, args: string[]): { status: number | null; stdout: string; stderr: string };
  /** Stops slurmctld alone (Slurm unreachable); startController() brings it back. */
  stopController(): void;
  startController(): void;
  /** Cancels every job, waits until none is left, then stops the daemons it started. */
  stop(): void;
}

const PROGRAMS = ["munged", "slurmctld", "slurmd", "sinfo", "srun", "sbatch", "squeue", "scancel", "scontrol"];
const SEARCH = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"];
const START_DEADLINE_MS = 60_000;

/** Why a cluster cannot be started here before trying (not root, a program missing), or null. */
export function slurmPrerequisiteProblem(): string | null {
  if (process.getuid?.() !== 0) return "starting a private Slurm cluster needs root (its daemons run as root)";
  const missing = PROGRAMS.filter((p) => !SEARCH.some((d) => fs.existsSync(path.join(d, p))));
  if (missing.length > 0) return `not installed: ${missing.join(", ")} (Debian packages slurm-wlm, munge)`;
  return null;
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Two (or more) TCP ports free on this host now, chosen by the kernel (port 0). */
function freePorts(n: number): number[] {
  const script = `const net=require("node:net");const s=[];let left=${n};
for(let i=0;i<${n};i++){const x=net.createServer();s.push(x);x.listen(0,"0.0.0.0",()=>{if(--left===0){
console.log(s.map(y=>y.address().port).join(" "));s.forEach(y=>y.close());}});}`;
  const out = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
  const ports = out.stdout.trim().split(" ").map(Number);
  if (ports.length !== n || ports.some((p) => !(p > 0))) throw new Error(`no free ports: ${out.stderr}`);
  return ports;
}

/** This host as slurmd sees it: "CPUs=2 … RealMemory=24105". */
function hostResources(): { cpus: number; memoryMiB: number } {
  const out = spawnSync("slurmd", ["-C"], { encoding: "utf8" });
  const cpus = Number(/\bCPUs=(\d+)/.exec(out.stdout)?.[1]);
  const memoryMiB = Number(/\bRealMemory=(\d+)/.exec(out.stdout)?.[1]);
  if (!(cpus > 0) || !(memoryMiB > 0)) throw new Error(`slurmd -C did not say this host's resources: ${out.stderr}`);
  return { cpus, memoryMiB };
}

function lastLines(file: string, n = 8): string {
  try {
    return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-n).join(" | ");
  } catch {
    return `(no ${path.basename(file)})`;
  }
}

/** A daemon's pid from its pid file, which it writes a moment after it forked into the background. */
function readPid(file: string): number | null {
  waitFor(() => pidIn(file) !== null, 10_000);
  return pidIn(file);
}

function pidIn(file: string): number | null {
  try {
    const pid = Number(fs.readFileSync(file, "utf8").trim());
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Alive and not a zombie (a daemon's pid is reaped by init, a moment later). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

function waitFor(check: () => boolean, deadlineMs = START_DEADLINE_MS): boolean {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) return false;
    sleepMs(50);
  }
  return true;
}

function stopPid(pid: number | null): void {
  if (pid === null || !alive(pid)) return;
  process.kill(pid, "SIGTERM");
  if (!waitFor(() => !alive(pid), 30_000)) {
    process.kill(pid, "SIGKILL");
    waitFor(() => !alive(pid), 10_000);
  }
}

/**
 * Starts a private single-node cluster in a fresh directory (removed when the file ends,
 * the cluster stopped first). Throws saying why it would not start, with its logs' last lines.
 */
export function startSlurmCluster(): SlurmCluster {
  const problem = slurmPrerequisiteProblem();
  if (problem !== null) throw new Error(problem);
  // Short: munged's and slurmd's sockets live under it (a socket path has at most 107 bytes).
  const dir = tempDir("slurm-");
  fs.chmodSync(dir, 0o755); // jobs and munge clients of any uid reach the socket beneath
  for (const d of ["munge", "state", "spool", "log", "shared"]) fs.mkdirSync(path.join(dir, d), { mode: 0o755 });
  fs.chmodSync(path.join(dir, "munge"), 0o711);
  fs.chmodSync(path.join(dir, "shared"), 0o1777);
  fs.writeFileSync(path.join(dir, "munge", "key"), randomBytes(1024), { mode: 0o400 });
  const node = os.hostname().split(".")[0] ?? "localhost";
  const partition = "sbx";
  const [ctldPort, slurmdPort] = freePorts(2) as [number, number];
  const { cpus, memoryMiB } = hostResources();
  const p = (...parts: string[]) => path.join(dir, ...parts);
  const conf = [
    `ClusterName=sbx${randomBytes(3).toString("hex")}`,
    `SlurmctldHost=${node}(127.0.0.1)`,
    "SlurmUser=root",
    "SlurmdUser=root",
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${slurmdPort}`,
    "AuthType=auth/munge",
    "CredType=cred/munge",
    `AuthInfo=socket=${p("munge", "sock")}`,
    `StateSaveLocation=${p("state")}`,
    `SlurmdSpoolDir=${p("spool")}`,
    `SlurmctldPidFile=${p("slurmctld.pid")}`,
    `SlurmdPidFile=${p("slurmd.pid")}`,
    `SlurmctldLogFile=${p("log", "slurmctld.log")}`,
    `SlurmdLogFile=${p("log", "slurmd.log")}`,
    "ProctrackType=proctrack/linuxproc",
    "TaskPlugin=task/none",
    "SelectType=select/cons_tres",
    "SelectTypeParameters=CR_Core_Memory",
    "JobAcctGatherType=jobacct_gather/none",
    "AccountingStorageType=accounting_storage/none",
    "JobCompType=jobcomp/none",
    "SchedulerType=sched/backfill",
    "MpiDefault=none",
    "ReturnToService=2",
    // Finished jobs stay known to slurmctld this long (what a restarted daemon reads back).
    "MinJobAge=600",
    `NodeName=${node} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${memoryMiB} State=UNKNOWN`,
    `PartitionName=${partition} Nodes=${node} Default=YES MaxTime=INFINITE State=UP`,
    "",
  ].join("\n");
  fs.writeFileSync(p("slurm.conf"), conf);
  const env = { SLURM_CONF: p("slurm.conf") };
  const run = (program: string, args: string[]) => {
    const out = spawnSync(program, args, { encoding: "utf8", env: { ...process.env, ...env }, cwd: dir });
    return { status: out.status, stdout: out.stdout ?? "", stderr: out.stderr ?? "" };
  };
  const pids = { munged: null as number | null, slurmctld: null as number | null, slurmd: null as number | null };
  const startController = () => {
    const out = run("slurmctld", ["-f", p("slurm.conf")]);
    pids.slurmctld = out.status === 0 ? readPid(p("slurmctld.pid")) : null;
    if (pids.slurmctld === null)
      throw new Error(`slurmctld would not start: ${out.stderr.trim()} ${lastLines(p("log", "slurmctld.log"))}`);
  };
  const stopController = () => {
    stopPid(pids.slurmctld);
    pids.slurmctld = null;
  };
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (pids.slurmctld !== null && pids.slurmd !== null) {
      // Every job the tests left: cancelled, and gone (its slurmstepd with it) before slurmd stops.
      run("scancel", ["--partition", partition]);
      waitFor(() => run("squeue", ["-h", "-o", "%i"]).stdout.trim() === "", 30_000);
    }
    stopPid(pids.slurmd);
    stopPid(pids.slurmctld);
    stopPid(pids.munged);
  };
  atEndOfFile(() => {
    stop();
    removeDir(dir);
  });
  try {
    const munged = spawnSync(
      "munged",
      [
        `--socket=${p("munge", "sock")}`,
        `--key-file=${p("munge", "key")}`,
        `--pid-file=${p("munge", "pid")}`,
        `--log-file=${p("munge", "log")}`,
        `--seed-file=${p("munge", "seed")}`,
        "--force",
      ],
      { encoding: "utf8" },
    );
    pids.munged = munged.status === 0 ? readPid(p("munge", "pid")) : null;
    if (pids.munged === null)
      throw new Error(`munged would not start: ${munged.stderr.trim()} ${lastLines(p("munge", "log"))}`);
    startController();
    const slurmd = run("slurmd", ["-f", p("slurm.conf"), "-N", node]);
    pids.slurmd = slurmd.status === 0 ? readPid(p("slurmd.pid")) : null;
    if (pids.slurmd === null)
      throw new Error(`slurmd would not start: ${slurmd.stderr.trim()} ${lastLines(p("log", "slurmd.log"))}`);
    const idle = () => run("sinfo", ["-h", "-n", node, "-o", "%t"]).stdout.trim() === "idle";
    if (!waitFor(idle)) {
      const state = run("sinfo", ["-h", "-n", node, "-o", "%t %E"]);
      throw new Error(
        `the node did not become idle (sinfo: ${state.stdout.trim() || state.stderr.trim()}); ` +
          `slurmctld: ${lastLines(p("log", "slurmctld.log"), 4)}; slurmd: ${lastLines(p("log", "slurmd.log"), 4)}`,
      );
    }
  } catch (err) {
    stop();
    throw err;
  }
  return { dir, env, partition, node, shared: p("shared"), run, stopController, startController, stop };
}

let fileCluster: SlurmCluster | Error | undefined;

/** The current test file's cluster, started on first use (stopped when the file ends); throws why it would not start. */
export function fileSlurmCluster(): SlurmCluster {
  if (fileCluster === undefined) {
    try {
      fileCluster = startSlurmCluster();
    } catch (err) {
      fileCluster = err as Error;
    }
    // Workers run several files in one module cache: the next file starts its own.
    atEndOfFile(() => {
      fileCluster = undefined;
    });
  }
  if (fileCluster instanceof Error) throw fileCluster;
  return fileCluster;
}

/** Why the file's cluster cannot run here (not root, not installed, would not start), or null. */
export function slurmProblem(): string | null {
  try {
    fileSlurmCluster();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
