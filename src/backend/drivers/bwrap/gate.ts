// How a sandbox's own unprivileged uid reaches its workspace when the backend is root
// (docs/drivers.md, "Identity"). bwrap started as that uid resolves every bind source
// by path, as that uid (realpath(3), then mount(2)): it cannot pass the backend's
// private data directory (0700 root, under /root most of the time) — not even with
// `--bind-fd`, whose fd bwrap resolves back to the same path.
//
// So the backend keeps one mount namespace of its own, the *gate*: a root bwrap that
// binds the host's / and puts an empty tmpfs over /dev/shm, and sleeps, dying with the
// backend. Each workspace in use is bound at /dev/shm/<hash> there (root, once per
// workspace), and each run enters that namespace as the sandbox's uid (`nsenter
// --mount --setuid --setgid`, exec'd as bwrap itself) and binds /workspace from the
// gate path, which that uid can reach: /dev/shm there is root's 0755 tmpfs, the bind
// is the workspace itself, owned by the uid. Nothing changes in the host's mount
// table, nothing is left behind: the namespace ends with the gate's process.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HostIdentity } from "../identity.js";

/** Where workspaces are bound inside the gate's mount namespace. */
export const GATE_DIR = "/dev/shm";
const START_TIMEOUT_MS = 10_000;
const HELPER_TIMEOUT_MS = 10_000;

export interface GatePrograms {
  bwrap: string;
  nsenter: string;
  /** util-linux's setpriv: a run with supplementary groups (a sandbox's volumes) starts through it; null: not installed. */
  setpriv?: string | null;
  mount: string;
  umount: string;
}

/** The gate of one backend process (see above); created lazily, restarted if it died. */
export class WorkspaceGate {
  private holder: { child: ChildProcess; nsPid: number } | null = null;
  /** Workspaces bound in the current holder: host path → the gate path and the inode it binds. */
  private readonly bound = new Map<string, { gatePath: string; dev: number; ino: number }>();

  constructor(private readonly programs: GatePrograms) {}

  /** Starts the gate when it is not running; throws saying why it cannot. */
  start(): number {
    const live = this.holder;
    if (live !== null && alive(live.child) && alive(live.nsPid)) return live.nsPid;
    live?.child.kill("SIGKILL");
    this.bound.clear();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-gate-"));
    try {
      // Files, not pipes: the wait below is synchronous and reads them as they fill.
      const infoFile = path.join(dir, "info");
      const errFile = path.join(dir, "stderr");
      const create = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL;
      const infoFd = fs.openSync(infoFile, create, 0o600);
      const errFd = fs.openSync(errFile, create, 0o600);
      let child: ChildProcess;
      try {
        child = spawn(
          this.programs.bwrap,
          [
            "--die-with-parent",
            "--dev-bind",
            "/",
            "/",
            "--tmpfs",
            GATE_DIR,
            "--info-fd",
            "3",
            "--",
            "sleep",
            "infinity",
          ],
          { cwd: "/", env: { PATH: "/usr/bin:/bin" }, stdio: ["ignore", "ignore", errFd, infoFd] },
        );
      } finally {
        fs.closeSync(infoFd);
        fs.closeSync(errFd);
      }
      child.on("error", () => {
        // Reported by the wait below (it never runs).
      });
      child.unref();
      const nsPid = waitForHolder(child, infoFile, () => readText(errFile));
      this.holder = { child, nsPid };
      return nsPid;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  /** The path, inside the gate, that binds `workspaceDir`; binds it first when needed. Throws saying why it cannot. */
  pathFor(workspaceDir: string): string {
    let nsPid = this.start();
    const st = fs.statSync(workspaceDir);
    const known = this.bound.get(workspaceDir);
    if (known && known.dev === st.dev && known.ino === st.ino && this.shows(nsPid, known.gatePath, st)) {
      return known.gatePath;
    }
    // The gate's mount namespace is a copy of the host's from when it started: a file
    // system mounted since (where the workspace lives) is not in it unless the host's
    // mounts propagate. Then a new gate, a new copy.
    if (!this.shows(nsPid, workspaceDir, st)) {
      const before = [...this.bound.keys()];
      this.stop();
      nsPid = this.start();
      if (!this.shows(nsPid, workspaceDir, st)) {
        throw new Error("cannot give the sandbox's uid a way to its workspace (the gate does not see it)");
      }
      // Paths handed out before stay good (a gate path is a hash of its host path): a run
      // that asked for its workspace, then for a volume on a file system of its own
      // mounted since, binds both in this gate.
      for (const dir of before) {
        try {
          if (dir !== workspaceDir) this.pathFor(dir);
        } catch {
          // Gone meanwhile: whoever asks for it next is told why.
        }
      }
    }
    const gatePath = path.posix.join(GATE_DIR, createHash("sha256").update(workspaceDir).digest("hex").slice(0, 24));
    // A workspace removed and made again: the old bind goes first.
    if (this.bound.has(workspaceDir)) this.helper(nsPid, [this.programs.umount, "-l", gatePath]);
    const failed = this.helper(nsPid, [this.programs.mount, "--bind", "--mkdir", workspaceDir, gatePath]);
    if (failed !== null) throw new Error(`cannot give the sandbox's uid a way to its workspace (mount: ${failed})`);
    // What is mounted must be the workspace itself, nothing else of that name.
    if (!this.shows(nsPid, gatePath, st)) {
      throw new Error("cannot give the sandbox's uid a way to its workspace (the gate binds another directory)");
    }
    this.bound.set(workspaceDir, { gatePath, dev: st.dev, ino: st.ino });
    return gatePath;
  }

  /** Forgets a workspace (its sandbox was removed): its bind in the gate goes. */
  release(workspaceDir: string): void {
    const known = this.bound.get(workspaceDir);
    const live = this.holder;
    this.bound.delete(workspaceDir);
    if (!known || live === null || !alive(live.nsPid)) return;
    this.helper(live.nsPid, [this.programs.umount, "-l", known.gatePath]);
  }

  /**
   * The program and arguments that run `program args` in the gate's mount namespace as
   * `identity` (no supplementary groups): nsenter, which execs the program in place.
   */
  enter(
    identity: HostIdentity,
    program: string,
    args: readonly string[],
    groups: readonly number[] = [],
  ): { file: string; args: string[] } {
    const nsPid = this.start();
    const namespace = [`--target=${nsPid}`, "--mount", "--root", "--wd"];
    if (groups.length === 0) {
      const who = [`--setuid=${identity.uid}`, `--setgid=${identity.gid}`];
      return { file: this.programs.nsenter, args: [...namespace, ...who, "--", program, ...args] };
    }
    // The groups of the volumes it mounts (docs/operations.md, "Named volumes"): nsenter
    // clears supplementary groups, setpriv sets exactly these.
    const setpriv = this.programs.setpriv;
    if (!setpriv) throw new Error("a sandbox with volumes needs setpriv (util-linux) to run with their groups");
    const who = [`--reuid=${identity.uid}`, `--regid=${identity.gid}`, `--groups=${groups.join(",")}`];
    return { file: this.programs.nsenter, args: [...namespace, "--", setpriv, ...who, "--", program, ...args] };
  }

  /** Ends the gate (tests; a backend's gate ends with its process). */
  stop(): void {
    this.holder?.child.kill("SIGKILL");
    this.holder = null;
    this.bound.clear();
  }

  /** Whether `inside` (a path in the gate's mount namespace) is the directory `st` describes. */
  private shows(nsPid: number, inside: string, st: fs.Stats): boolean {
    try {
      const seen = fs.statSync(`/proc/${nsPid}/root${inside}`);
      return seen.dev === st.dev && seen.ino === st.ino;
    } catch {
      return false;
    }
  }

  /** Runs a program (as root) in the gate's mount namespace; null when it succeeded, else why not. */
  private helper(nsPid: number, argv: string[]): string | null {
    const result = spawnSync(this.programs.nsenter, [`--target=${nsPid}`, "--mount", "--", ...argv], {
      encoding: "utf8",
      env: {},
      timeout: HELPER_TIMEOUT_MS,
    });
    if (result.status === 0) return null;
    return (result.stderr || String(result.error ?? `exit ${result.status}`)).trim().split("\n").join("; ");
  }
}

/** Waits (synchronously: at start-up or the first run) until the gate's process runs `sleep` in its namespace. */
function waitForHolder(child: ChildProcess, infoFile: string, stderr: () => string): number {
  const deadline = Date.now() + START_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    if (!alive(child)) {
      throw new Error(`the workspace gate ended at once (${stderr().trim() || `exit ${child.exitCode}`})`);
    }
    const nsPid = childPid(infoFile);
    if (nsPid !== null && readComm(nsPid) === "sleep") return nsPid;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the workspace gate did not start (${stderr().trim() || "no answer"})`);
    }
    Atomics.wait(pause, 0, 0, 2);
  }
}

/** Whether a process is alive (read from /proc: a synchronous wait sees no exit events). */
function alive(p: ChildProcess | number): boolean {
  const pid = typeof p === "number" ? p : p.pid;
  if (pid === undefined) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function childPid(infoFile: string): number | null {
  try {
    const doc = JSON.parse(fs.readFileSync(infoFile, "utf8")) as { "child-pid"?: unknown };
    return typeof doc["child-pid"] === "number" ? doc["child-pid"] : null;
  } catch {
    return null;
  }
}

function readComm(pid: number): string | null {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}
