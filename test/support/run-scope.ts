// What one test run owns, so that its end can prove it left nothing behind
// (docs/testing.md, "Nothing left behind"). Used by the global setup only.
//
// Several suites (other checkouts, CI's two vitest invocations) run on one machine at
// once, so nothing here looks at what is not this run's:
//
// - Files: the global setup gives the run a fresh directory of its own
//   (`sbx-run-PID-XXXXXX` in the system's temporary directory) and exports it as
//   TMPDIR before any test worker starts. Workers inherit it, so os.tmpdir() in
//   every test, every test/support helper and the code under test is that directory,
//   and so is TMPDIR of every sbx a test spawns (sbxEnv) and of the daemons those start
//   (the daemon keeps TMPDIR). At the end it must be empty.
//
// - Processes: a process of the run is one in the run's own cgroup. The global setup
//   makes one (`sbx-test-run-PID-XXXXXX`) in a hierarchy that only tracks (the cgroup v2
//   hierarchy, else cgroup v1's `name=systemd`; no resource controller, so nothing sbx
//   does with limits ever moves a process out of it) and moves the vitest process into
//   it. Every process started after that inherits it, whatever becomes of its
//   environment or its parent: a sandboxed command under bwrap (clearenv, its own pid
//   and cgroup namespaces: a cgroup namespace changes what it sees, not where it is), a
//   daemon that detached, an orphan re-parented to init. Nothing else is in that
//   cgroup. Where no such cgroup can be made (not root, a read-only /sys/fs/cgroup), the
//   run's processes are those whose environment names the run's directory (TMPDIR or
//   SBX_TEST_RUN: workers, spawned sbx, daemons), whose working directory is inside it
//   (commands of the `none` driver run in a workspace there), and their descendants;
//   a sandboxed orphan can escape that weaker net, which the report says.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CONTROLLERS, planCgroups } from "../../src/backend/drivers/limits/cgroups.js";

/** Exported to every worker: the run's directory (also its TMPDIR). */
export const RUN_ENV = "SBX_TEST_RUN";
const RUN_DIR_PREFIX = "sbx-run-";
const CGROUP_PREFIX = "sbx-test-run-";

export interface RunScope {
  /** The run's directory: its TMPDIR (`tmp/`, which must be empty at the end) and its journal. */
  root: string;
  /** The run's TMPDIR. */
  dir: string;
  /** The cgroup that holds the run's processes, or null (then: the environment and working directory). */
  cgroup: { dir: string; home: string } | null;
  /** How the run's processes are found, said in the report. */
  tracking: string;
}

export interface Leftovers {
  processes: string[];
  files: string[];
  mounts: string[];
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** The pid in a name like `PREFIX1234-abc`, when that process is gone (its run ended without its teardown). */
function deadOwner(name: string, prefix: string): boolean {
  const pid = Number(name.slice(prefix.length).split("-")[0]);
  return Number.isSafeInteger(pid) && pid > 0 && !alive(pid);
}

/** Mount points at or under `dir`, deepest first (this process's mount namespace). */
function mountsUnder(dir: string): string[] {
  return fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((m): m is string => m !== undefined && (m === dir || m.startsWith(`${dir}/`)))
    .map((m) => m.replace(/\\040/g, " "))
    .sort((a, b) => b.length - a.length);
}

function unmountAll(mounts: string[]): void {
  for (const m of mounts) spawnSync("umount", ["-l", m]);
}

/** A hierarchy that only tracks processes, and where this process is in it. */
function trackingHierarchy(): { dir: string } | null {
  const own = fs.readFileSync("/proc/self/cgroup", "utf8").split("\n");
  const candidates: Array<{ dir: string; rank: number }> = [];
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const [fstype, , superOptions = ""] = right.split(" ");
    const root = fields[3]!;
    const mountPoint = fields[4]!;
    let ownPath: string | undefined;
    let rank: number;
    if (fstype === "cgroup2") {
      ownPath = own.find((l) => l.startsWith("0::"))?.slice(3);
      rank = 0;
    } else if (fstype === "cgroup" && superOptions.split(",").includes("name=systemd")) {
      ownPath = own.find((l) => /^\d+:name=systemd:/.test(l))?.replace(/^\d+:name=systemd:/, "");
      rank = 1;
    } else continue;
    if (ownPath === undefined) continue;
    const rel =
      root === "/"
        ? ownPath
        : ownPath.startsWith(`${root}/`) || ownPath === root
          ? ownPath.slice(root.length)
          : undefined;
    if (rel === undefined) continue;
    candidates.push({ dir: path.join(mountPoint, rel), rank });
  }
  candidates.sort((a, b) => a.rank - b.rank);
  return candidates[0] ?? null;
}

/** Pids of every process in a cgroup and the cgroups below it. */
function cgroupPids(dir: string): number[] {
  const pids: number[] = [];
  const walk = (d: string) => {
    try {
      for (const line of fs.readFileSync(path.join(d, "cgroup.procs"), "utf8").split("\n")) {
        if (line !== "") pids.push(Number(line));
      }
      for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
    } catch {
      // removed meanwhile
    }
  };
  walk(dir);
  return pids;
}

/** Removes a cgroup and those below it (empty ones only: rmdir refuses the others). */
function removeCgroup(dir: string): void {
  try {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) removeCgroup(path.join(dir, e.name));
    fs.rmdirSync(dir);
  } catch {
    // not empty, or gone
  }
}

/** This process and every descendant it has now (children of the vitest process started before the setup). */
function selfAndDescendants(): number[] {
  const tree = processTable();
  const found = [process.pid];
  for (let i = 0; i < found.length; i++) for (const p of tree) if (p.ppid === found[i]) found.push(p.pid);
  return found;
}

interface ProcessInfo {
  pid: number;
  ppid: number;
  state: string;
  comm: string;
}

function processTable(): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const rest = stat.slice(close + 2).split(" ");
      out.push({
        pid: Number(name),
        comm: stat.slice(stat.indexOf("(") + 1, close),
        state: rest[0]!,
        ppid: Number(rest[1]),
      });
    } catch {
      // gone
    }
  }
  return out;
}

function makeCgroup(): { cgroup: RunScope["cgroup"]; tracking: string } {
  if (process.getuid?.() !== 0)
    return { cgroup: null, tracking: "environment and working directory (not root: no cgroup of its own)" };
  let hierarchy: { dir: string } | null;
  try {
    hierarchy = trackingHierarchy();
  } catch (err) {
    return { cgroup: null, tracking: `environment and working directory (${(err as Error).message})` };
  }
  if (hierarchy === null)
    return { cgroup: null, tracking: "environment and working directory (no cgroup v2 or name=systemd hierarchy)" };
  // Cgroups of runs whose vitest is gone (killed before its teardown), when empty.
  try {
    for (const name of fs.readdirSync(hierarchy.dir)) {
      if (name.startsWith(CGROUP_PREFIX) && deadOwner(name, CGROUP_PREFIX))
        removeCgroup(path.join(hierarchy.dir, name));
    }
  } catch {
    // unreadable: made below
  }
  const dir = path.join(hierarchy.dir, `${CGROUP_PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    fs.mkdirSync(dir);
    for (const pid of selfAndDescendants()) {
      try {
        fs.writeFileSync(path.join(dir, "cgroup.procs"), `${pid}\n`);
      } catch (err) {
        if (pid === process.pid) throw err;
      }
    }
    return { cgroup: { dir, home: hierarchy.dir }, tracking: `cgroup ${dir}` };
  } catch (err) {
    removeCgroup(dir);
    return { cgroup: null, tracking: `environment and working directory (cgroup ${dir}: ${(err as Error).message})` };
  }
}

/**
 * The limits cgroups of daemons that are gone (killed by a test: a crash leaves them to
 * the next start of that daemon, which never comes). sbx names them `sbx-<12 hex>` below
 * the daemon's own cgroup, which is this run's (or another suite's) in each hierarchy;
 * only empty ones go (rmdir refuses the others), and a live daemon makes its own again
 * when it needs it (drivers/limits/cgroups.ts).
 */
function removeEmptyLimitCgroups(): void {
  if (process.getuid?.() !== 0) return;
  let plan: ReturnType<typeof planCgroups>;
  try {
    plan = planCgroups(
      fs.readFileSync("/proc/self/mountinfo", "utf8"),
      fs.readFileSync("/proc/self/cgroup", "utf8"),
      () => null,
    );
  } catch {
    return;
  }
  const dirs = new Set<string>();
  for (const c of CONTROLLERS) {
    const place = plan[c];
    if ("ownDir" in place) dirs.add(place.ownDir);
  }
  for (const dir of dirs) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir).filter((n) => /^sbx-[0-9a-f]{12}$/.test(n));
    } catch {
      continue;
    }
    for (const n of names) removeCgroup(path.join(dir, n));
  }
}

/** Starts the run's scope: its temporary directory (exported as TMPDIR) and its cgroup. */
export function beginRun(): RunScope {
  const base = os.tmpdir();
  // Directories of runs whose vitest is gone (killed before its teardown).
  for (const name of fs.readdirSync(base)) {
    if (!name.startsWith(RUN_DIR_PREFIX) || !deadOwner(name, RUN_DIR_PREFIX)) continue;
    const stale = path.join(base, name);
    unmountAll(mountsUnder(stale));
    fs.rmSync(stale, { recursive: true, force: true });
  }
  removeEmptyLimitCgroups();
  const root = fs.mkdtempSync(path.join(base, `${RUN_DIR_PREFIX}${process.pid}-`));
  const dir = path.join(root, "tmp");
  fs.mkdirSync(dir, { mode: 0o700 });
  process.env.TMPDIR = dir;
  process.env[RUN_ENV] = root;
  return { root, dir, ...makeCgroup() };
}

/** Pids of the run's processes other than this one (the vitest process). */
function runProcesses(run: RunScope): number[] {
  if (run.cgroup !== null) return cgroupPids(run.cgroup.dir).filter((pid) => pid !== process.pid);
  const table = processTable().filter((p) => p.pid !== process.pid && p.state !== "Z");
  const marked = new Set<number>();
  const markers = [`TMPDIR=${run.dir}`, `${RUN_ENV}=${run.root}`];
  for (const p of table) {
    try {
      const environ = fs.readFileSync(`/proc/${p.pid}/environ`, "utf8").split("\0");
      const cwd = fs.readlinkSync(`/proc/${p.pid}/cwd`);
      if (markers.some((m) => environ.includes(m)) || cwd === run.dir || cwd.startsWith(`${run.dir}/`))
        marked.add(p.pid);
    } catch {
      // gone, or not ours to read
    }
  }
  // Their descendants too (a sandbox's commands carry neither).
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of table) {
      if (!marked.has(p.pid) && marked.has(p.ppid)) {
        marked.add(p.pid);
        grew = true;
      }
    }
  }
  return [...marked];
}

/** Seconds since boot (/proc/uptime): the clock of a process's start time in /proc/PID/stat. */
export function uptime(): number {
  return Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]);
}

/** The journal: when each test file started and ended (file-scope.ts writes it). */
export function journalFile(root: string): string {
  return path.join(root, "files.log");
}

/** The test files that were running when a process started (from the journal), to say who left it. */
function filesRunningAt(run: RunScope, pid: number): string[] {
  let started: number;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22, in clock ticks (100 a second on Linux).
    started = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]) / 100;
  } catch {
    return [];
  }
  const spans = new Map<string, { start: number; end: number }>();
  let journal = "";
  try {
    journal = fs.readFileSync(journalFile(run.root), "utf8");
  } catch {
    return [];
  }
  for (const line of journal.split("\n")) {
    const [at, what, file] = line.split("\t");
    if (file === undefined) continue;
    const span = spans.get(file) ?? { start: Number(at), end: Number.POSITIVE_INFINITY };
    if (what === "end") span.end = Number(at);
    spans.set(file, span);
  }
  // /proc/uptime has centiseconds: a little slack either side.
  return [...spans].filter(([, s]) => s.start - 0.05 <= started && started <= s.end + 0.05).map(([f]) => f);
}

function describeProcess(run: RunScope, pid: number): string {
  const read = (f: string) => {
    try {
      return fs.readFileSync(`/proc/${pid}/${f}`, "utf8");
    } catch {
      return "";
    }
  };
  const argv = read("cmdline").split("\0").filter(Boolean).join(" ");
  const stat = read("stat");
  const ppid = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1];
  let cwd = "?";
  try {
    cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    // gone, or another namespace's
  }
  const home = read("environ")
    .split("\0")
    .find((v) => v.startsWith("SBX_HOME="));
  const files = filesRunningAt(run, pid);
  const during = files.length > 0 ? `; started while ${files.join(" or ")} ran` : "";
  return `pid ${pid} (parent ${ppid ?? "?"}): ${argv || "(gone)"} — cwd ${cwd}${home ? `, ${home}` : ""}${during}`;
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/**
 * Ends the run's scope: what is left of its processes, mounts and files is reported,
 * then ended and removed so that a failed run does not burden the next one.
 */
export async function endRun(run: RunScope): Promise<Leftovers> {
  if (run.cgroup !== null) {
    try {
      fs.writeFileSync(path.join(run.cgroup.home, "cgroup.procs"), `${process.pid}\n`);
    } catch {
      // stays: filtered out by pid
    }
  }
  // Processes that are ending as the last files finish (a group signalled, a worker exiting).
  await waitFor(() => runProcesses(run).length === 0, 5_000);
  const pids = runProcesses(run);
  const processes = pids.map((pid) => describeProcess(run, pid));
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  await waitFor(() => runProcesses(run).length === 0, 5_000);
  if (run.cgroup !== null) removeCgroup(run.cgroup.dir);
  removeEmptyLimitCgroups();

  const mountPoints = mountsUnder(run.root);
  const mounts = mountPoints.map((m) => path.relative(run.dir, m) || ".");
  unmountAll(mountPoints);
  let files: string[] = [];
  try {
    files = fs.readdirSync(run.dir).sort();
  } catch {
    // removed by someone: nothing to say about its contents
  }
  fs.rmSync(run.root, { recursive: true, force: true });
  return { processes, files, mounts };
}

/** The report of a run that left something, or null. */
export function leftoverReport(run: RunScope, left: Leftovers): string | null {
  const n = left.processes.length + left.files.length + left.mounts.length;
  if (n === 0) return null;
  const lines = [
    `sbx tests: this run left ${n} thing(s) behind (ended and removed now). Every test removes what it made and`,
    'ends what it started: see docs/testing.md, "Nothing left behind".',
    `  processes (found by ${run.tracking}):`,
    ...left.processes.map((p) => `    ${p}`),
    `  in ${run.dir} (the run's TMPDIR):`,
    ...left.mounts.map((m) => `    mount ${m}`),
    ...left.files.slice(0, 50).map((f) => `    ${f}`),
    ...(left.files.length > 50 ? [`    … and ${left.files.length - 50} more`] : []),
  ];
  return lines.join("\n");
}
