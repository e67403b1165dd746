// The `bwrap` driver (docs/drivers.md): each run in its own bubblewrap sandbox.
//
// - New user, pid, ipc, uts and (unless the sandbox has network) network
//   namespaces; no capabilities; no further user namespaces; a new session (no
//   terminal injection); killed with its parent (--die-with-parent).
// - The host's system directories read-only (/usr and the /bin, /lib… links or
//   directories, /etc with every file or directory an unprivileged user could not
//   read hidden), a private /tmp and /var/tmp, a new /proc and a minimal /dev, and
//   the sandbox workspace read-write at /workspace. Nothing else of the host.
// - When the daemon runs as root, commands run as nobody (65534) in their user
//   namespace, without any capability.
//
// The leader the backend spawns is bwrap itself (pid A, its own process group);
// bwrap forks the namespace's init (B, pid 1 inside), which runs the command in a
// new session. Signals for "the run" go to every process group in B's pid
// namespace except B's own; SIGKILL ends A's group, and with it (die-with-parent,
// then the pid namespace) everything. bwrap reports a command killed by signal N
// as exit 128+N; when the backend delivered N to the run, it is reported as that
// signal again.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { WORKSPACE } from "../../protocol/types.js";
import type {
  DriverDescription,
  DriverHost,
  DriverProbe,
  SandboxChild,
  SandboxDriver,
  SandboxPlacement,
  SpawnRequest,
} from "./driver.js";
import { SpawnError } from "./driver.js";
import { liveProcesses, pidNamespace, readProcEntry, runMembers, signalProcessGroup } from "./proc.js";

/** The uid/gid commands run as inside when the daemon is root. */
const NOBODY = 65534;
/** Top-level names that are directories or (merged /usr) links to them. */
const SYSTEM_LINKS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
/** Bounds the walk of /etc for entries to hide. */
const ETC_WALK_LIMIT = 50_000;
const INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";

export interface BwrapDriverOptions {
  /** Who the daemon runs as and its PATH (where bwrap is found). */
  host: DriverHost;
  /** The bwrap program; default: found on PATH. */
  program?: string;
  /** Where /etc is read from (tests); default /etc. */
  etcDir?: string;
}

export class BwrapDriver implements SandboxDriver {
  readonly isolation = "bwrap" as const;
  readonly runsEndWithBackend = true;
  /** bwrap reads its options (--args 3) before it does anything: until they are written, nothing runs. */
  readonly startsHeld = true;
  private probed: DriverProbe | null = null;
  private program: string | null = null;
  /** Arguments every run shares: namespaces, the host's read-only view. */
  private hostView: string[] = [];
  private readonly asRoot: boolean;

  constructor(private readonly opts: BwrapDriverOptions) {
    this.asRoot = opts.host.uid === 0;
  }

  probe(): DriverProbe {
    if (this.probed) return this.probed;
    this.probed = this.runProbe();
    return this.probed;
  }

  workspacePath(_placement: SandboxPlacement): string {
    return WORKSPACE;
  }

  commandPath(placement: SandboxPlacement, hostPath: string): string {
    const rel = path.relative(placement.workspaceDir, hostPath);
    return rel === "" ? WORKSPACE : path.posix.join(WORKSPACE, rel.split(path.sep).join("/"));
  }

  spawn(req: SpawnRequest): SandboxChild {
    const probe = this.probe();
    if (!probe.available || this.program === null) {
      throw new SpawnError("EBWRAP", `bwrap is not available: ${probe.reason}`);
    }
    const cwd = this.commandPath(req.placement, req.cwd);
    const missing = missingProgram(req.argv[0] ?? "", req.env.PATH ?? "", cwd, req.placement.workspaceDir);
    if (missing) throw new SpawnError(missing, `${req.argv[0]}: ${missing}`);
    const args = [
      ...this.hostView,
      ...(req.placement.network ? resolvConfBinds() : ["--unshare-net"]),
      "--bind",
      req.placement.workspaceDir,
      WORKSPACE,
      "--chdir",
      cwd,
      // Last, once every mount point exists: the sandbox's own root is read-only too.
      "--remount-ro",
      "/",
    ];
    // Options through a pipe (--args), so no host path shows in the sandbox's /proc/1/cmdline.
    const child = spawn(this.program, ["--args", "3", "--", ...req.argv], {
      cwd: "/",
      env: req.env,
      detached: true,
      stdio: [req.stdin ? "pipe" : "ignore", "pipe", "pipe", "pipe"],
    });
    const argsPipe = child.stdio[3] as NodeJS.WritableStream | null;
    argsPipe?.on("error", () => {
      // bwrap died before reading its arguments: its exit says why.
    });
    // Held, bwrap waits for them; should the backend die meanwhile, the pipe ends empty
    // and bwrap, with no root but an empty one, cannot start the command.
    const writeArgs = () => argsPipe?.end(Buffer.from(args.map((a) => `${a}\0`).join("")));
    if (!req.held) writeArgs();
    return new BwrapChild(child, req.held ? writeArgs : null);
  }

  describe(_placement: SandboxPlacement): DriverDescription {
    return {
      isolation: "bwrap",
      version: this.probe().version,
      user: this.asRoot
        ? "nobody (65534), in a user namespace, without capabilities"
        : `${this.opts.host.username}, in a user namespace, without capabilities`,
      namespaces: ["user", "mount", "pid", "ipc", "uts", ...(_placement.network ? [] : ["net"])],
      host_paths_read_only: this.readOnlyPaths(),
    };
  }

  private readOnlyPaths(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.hostView.length; i++) {
      if (this.hostView[i] === "--ro-bind" && this.hostView[i + 1] !== "/dev/null") out.push(this.hostView[i + 2]!);
    }
    return out;
  }

  private runProbe(): DriverProbe {
    const program = this.opts.program ?? findOnPath("bwrap", this.opts.host.path);
    if (program === null) return { available: false, reason: `bwrap is not on PATH: ${INSTALL_HINT}`, version: null };
    const version = spawnSync(program, ["--version"], { encoding: "utf8", timeout: 5000 });
    if (version.status !== 0) {
      return {
        available: false,
        reason: `${program} cannot run (${oneLine(version.stderr || String(version.error))}): ${INSTALL_HINT}`,
        version: null,
      };
    }
    this.program = program;
    this.hostView = hostViewArgs(this.opts.etcDir ?? "/etc", this.asRoot);
    const trial = spawnSync(
      program,
      [...this.hostView, "--unshare-net", "--tmpfs", WORKSPACE, "--chdir", WORKSPACE, "--", "true"],
      {
        encoding: "utf8",
        timeout: 10_000,
        env: { PATH: "/usr/bin:/bin" },
      },
    );
    if (trial.status !== 0) {
      this.program = null;
      const why = oneLine(trial.stderr || (trial.error ? String(trial.error) : `exit ${trial.status ?? trial.signal}`));
      return {
        available: false,
        reason: `bwrap cannot create a sandbox here (${why}); user namespaces may be disabled`,
        version: version.stdout.trim() || null,
      };
    }
    return { available: true, reason: null, version: version.stdout.trim() || null };
  }
}

/** The arguments shared by every run: identity, namespaces and the host's read-only view. */
function hostViewArgs(etcDir: string, asRoot: boolean): string[] {
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-user",
    ...(asRoot ? ["--uid", String(NOBODY), "--gid", String(NOBODY)] : []),
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--hostname",
    "sbx",
    "--unshare-cgroup-try",
    "--ro-bind",
    "/usr",
    "/usr",
  ];
  for (const name of SYSTEM_LINKS) {
    const host = `/${name}`;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(host);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push("--symlink", fs.readlinkSync(host), host);
    else if (st.isDirectory()) args.push("--ro-bind", host, host);
  }
  args.push("--ro-bind", etcDir, "/etc");
  for (const hidden of unreadableEntries(etcDir)) {
    const inside = path.posix.join("/etc", path.relative(etcDir, hidden.path));
    if (hidden.dir) args.push("--tmpfs", inside, "--remount-ro", inside);
    else args.push("--ro-bind", "/dev/null", inside);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp");
  return args;
}

/**
 * Files and directories under `dir` that a user other than their owner and group
 * could not read (e.g. /etc/shadow, /etc/ssl/private): inside, a command's files
 * map to the daemon's own uid on the host, so permissions alone would not hide them.
 */
export function unreadableEntries(dir: string): Array<{ path: string; dir: boolean }> {
  const out: Array<{ path: string; dir: boolean }> = [];
  let seen = 0;
  const walk = (d: string) => {
    let names: string[];
    try {
      names = fs.readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      if (++seen > ETC_WALK_LIMIT) return;
      const p = path.join(d, name);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(p);
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) continue;
      if (st.isDirectory()) {
        if ((st.mode & 0o005) !== 0o005) out.push({ path: p, dir: true });
        else walk(p);
      } else if ((st.mode & 0o004) === 0) {
        out.push({ path: p, dir: false });
      }
    }
  };
  walk(dir);
  return out;
}

/** With the host's network, /etc/resolv.conf may link outside /etc (e.g. into /run): bind its target too. */
function resolvConfBinds(): string[] {
  try {
    const target = fs.realpathSync("/etc/resolv.conf");
    if (!target.startsWith("/etc/") && !target.startsWith("/usr/")) return ["--ro-bind-try", target, target];
  } catch {
    // no resolv.conf
  }
  return [];
}

/**
 * Why the program cannot be started in the sandbox (ENOENT, EACCES), judged on the
 * host through the sandbox's view, or null when it can or when that cannot be told
 * (then bwrap tries and says why). This keeps "command not found" a shell's 127.
 */
function missingProgram(
  program: string,
  searchPath: string,
  cwd: string,
  workspaceDir: string,
): "ENOENT" | "EACCES" | null {
  const candidates: string[] = [];
  if (program.includes("/")) {
    candidates.push(path.posix.resolve(cwd, program));
  } else {
    for (const dir of searchPath.split(":")) {
      if (dir !== "") candidates.push(path.posix.join(path.posix.resolve(cwd, dir), program));
    }
  }
  let sawNotExecutable = false;
  for (const inside of candidates) {
    const host = hostPathOf(inside, workspaceDir);
    if (host === undefined) return null;
    if (host === null) continue;
    let st: fs.Stats;
    try {
      st = fs.statSync(host);
    } catch {
      continue;
    }
    if (st.isFile() && (st.mode & 0o111) !== 0) return null;
    sawNotExecutable = true;
  }
  return sawNotExecutable ? "EACCES" : "ENOENT";
}

/** Top-level directories a sandbox has that are not the host's (their content cannot be told from outside). */
const SANDBOX_OWN = ["tmp", "var", "proc", "dev"];

/**
 * The host path behind a path inside the sandbox; null when the sandbox has no such
 * path, undefined when it cannot be told from the host (e.g. under /tmp).
 */
function hostPathOf(inside: string, workspaceDir: string): string | null | undefined {
  if (inside === WORKSPACE || inside.startsWith(`${WORKSPACE}/`))
    return path.join(workspaceDir, inside.slice(WORKSPACE.length));
  const top = inside.split("/")[1] ?? "";
  if (top === "usr" || top === "etc" || SYSTEM_LINKS.includes(top)) return inside;
  return SANDBOX_OWN.includes(top) ? undefined : null;
}

function findOnPath(program: string, searchPath: string): string | null {
  for (const dir of searchPath.split(":")) {
    if (dir === "") continue;
    const candidate = path.join(dir, program);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function oneLine(text: string): string {
  return text.trim().split("\n").join("; ");
}

const SIGNAL_NUMBERS = os.constants.signals as Record<string, number>;

/** A bwrap run: the leader is bwrap (A), the namespace's init is its child (B). */
class BwrapChild implements SandboxChild {
  /** Signals delivered to the run, to recognise "128+N" as death by that signal. */
  private readonly delivered = new Set<number>();
  private init: { pid: number; ns: string } | null = null;

  constructor(
    readonly process: ChildProcess,
    /** Writes bwrap's options to a held run (once); null when they were written at spawn. */
    private writeArgs: (() => void) | null,
  ) {}

  proceed(): void {
    const write = this.writeArgs;
    this.writeArgs = null;
    write?.();
  }

  get pgid(): number {
    return this.process.pid ?? -1;
  }

  signal(signal: NodeJS.Signals): boolean {
    const leader = this.process.pid;
    if (leader === undefined) return false;
    const n = SIGNAL_NUMBERS[signal];
    if (n !== undefined) this.delivered.add(n);
    if (signal === "SIGKILL") return signalProcessGroup(leader, "SIGKILL");
    const init = this.findInit();
    const groups = new Set<number>();
    if (init !== null) {
      for (const p of liveProcesses()) {
        if (p.pid === init.pid || p.pgid === leader) continue;
        if (pidNamespace(p.pid) === init.ns) groups.add(p.pgid);
      }
    }
    // The command has not started yet (or has just ended): the signal goes to bwrap,
    // whose default action ends the run.
    if (groups.size === 0) return signalProcessGroup(leader, signal);
    let sent = false;
    for (const g of groups) sent = signalProcessGroup(g, signal) || sent;
    return sent;
  }

  commandExit(code: number | null, signal: NodeJS.Signals | null) {
    if (code !== null && code > 128 && this.delivered.has(code - 128)) {
      const name = Object.entries(SIGNAL_NUMBERS).find(([, n]) => n === code - 128)?.[0];
      if (name) return { code: null, signal: name as NodeJS.Signals };
    }
    return { code, signal };
  }

  members(): string[] {
    const leader = this.process.pid;
    return leader === undefined ? [] : runMembers(leader).map((p) => p.name);
  }

  /** B: bwrap's child, the pid namespace's init, once it exists. */
  private findInit(): { pid: number; ns: string } | null {
    if (this.init !== null && readProcEntry(this.init.pid) !== null) return this.init;
    const leader = this.process.pid;
    if (leader === undefined) return null;
    const child = liveProcesses().find((p) => p.ppid === leader);
    const ns = child ? pidNamespace(child.pid) : null;
    if (!child || ns === null || ns === pidNamespace(process.pid)) return null;
    this.init = { pid: child.pid, ns };
    return this.init;
  }
}
