// The `bwrap` driver (docs/drivers.md): each run in its own bubblewrap sandbox. The
// mechanisms live one per file beside this one:
//
//   host-view.ts    the host's facts the mount layout needs (read once, at the probe)
//   args.ts         bwrap's options for one run: a pure function (namespaces, mounts,
//                   identity, environment inside only, filter, status report)
//   ../identity.ts  which host uid a sandbox's commands are (their own when root)
//   ../seccomp/     the syscall filter's BPF program
//   gate.ts         how a sandbox's uid reaches its workspace when the backend is root
//   path-lookup.ts  "command not found" before bwrap starts; bwrap on PATH
//   run.ts          a spawned run: signalling by /proc scan, 128+N
//   status.ts       bwrap's --json-status-fd: did the command start
//   probe.ts        can bwrap run here, and do our options work
//
// Nothing of a request reaches bwrap's own process: it is started with an empty
// environment, its options (the command's environment among them) come through a
// pipe, and when the backend is root it is started (through the gate) as the sandbox's
// own unprivileged uid, so the user namespace it makes maps to that uid, never to the
// host's root.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { WORKSPACE } from "../../../protocol/types.js";
import {
  type DriverDescription,
  type DriverHost,
  type DriverProbe,
  type SandboxChild,
  type SandboxDriver,
  type SandboxPlacement,
  SpawnError,
  type SpawnRequest,
} from "../driver.js";
import { INSIDE_ID, SANDBOX_UID_FIRST } from "../identity.js";
import type { Limiter, RunLimits } from "../limits/limiter.js";
import { buildFilter, encodeFilter } from "../seccomp/bpf.js";
import { FILTER_RULES } from "../seccomp/policy.js";
import { hostArch } from "../seccomp/syscalls.js";
import { type BwrapFds, bwrapArguments, bwrapCommandLine, encodeArguments, type WorkspaceSource } from "./args.js";
import { WorkspaceGate } from "./gate.js";
import { type HostView, readHostView } from "./host-view.js";
import { findOnPath, missingProgram } from "./path-lookup.js";
import { type Launcher, probeBwrap } from "./probe.js";
import { BwrapRun, withoutHostPaths } from "./run.js";

export interface BwrapDriverOptions {
  /** Who the daemon runs as (root: each sandbox's commands run as its own uid) and its PATH (where bwrap is found). */
  host: DriverHost;
  /** The bwrap program; default: found on PATH. */
  program?: string;
  /** Where /etc is read from (tests); default /etc. */
  etcDir?: string;
  /** The sandboxes' limits (limits/): each run's leader joins its sandbox's cgroup before it goes on. */
  limits?: Limiter;
}

/** Where each descriptor sits in the child (the spawn's stdio array); 6: the workspace, when bound by fd. */
const FD: BwrapFds = { args: 3, status: 4, seccomp: 5, setup: 7 };
const WORKSPACE_FD = 6;
const O_WORKSPACE = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;
/** Where the gate's helpers are looked for besides the backend's PATH. */
const SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

/** One gate per backend process (gate.ts), shared by its drivers; it ends with the process. */
let sharedGate: WorkspaceGate | null = null;

export class BwrapDriver implements SandboxDriver {
  readonly isolation = "bwrap" as const;
  readonly runsEndWithBackend = true;
  /** bwrap reads its options (--args 3) before it does anything: until they are written, nothing runs. */
  readonly startsHeld = true;
  private probed: DriverProbe | null = null;
  private program: string | null = null;
  private view: HostView | null = null;
  private gate: WorkspaceGate | null = null;
  /** Whether this bwrap sizes a tmpfs (`--size`), read from its --help at the probe. */
  private tmpSize = false;
  private readonly asRoot: boolean;
  /** The syscall filter for this architecture, or null where none is built. */
  private readonly seccomp: Buffer | null;

  constructor(private readonly opts: BwrapDriverOptions) {
    this.asRoot = opts.host.uid === 0;
    const arch = hostArch();
    this.seccomp = arch === null ? null : encodeFilter(buildFilter(arch));
  }

  /** Throws DaemonStartError when bwrap runs here but not with our options (probe.ts). */
  probe(): DriverProbe {
    if (this.probed) return this.probed;
    const program = this.opts.program ?? findOnPath("bwrap", this.opts.host.path);
    const view = readHostView(this.opts.etcDir ?? "/etc");
    let gate: WorkspaceGate | null = null;
    let gateProblem: string | null = null;
    if (this.asRoot && program !== null) {
      try {
        gate = this.startGate(program);
      } catch (err) {
        gateProblem = (err as Error).message;
      }
    }
    const probe = probeBwrap({
      program,
      view,
      identity: this.asRoot ? { uid: SANDBOX_UID_FIRST, gid: SANDBOX_UID_FIRST } : null,
      seccomp: this.seccomp,
      launcher: gate === null ? null : gateLauncher(gate),
      gateProblem,
    });
    if (probe.available && program !== null) {
      this.tmpSize = supportsTmpSize(program);
      this.program = program;
      this.view = view;
      this.gate = gate;
    }
    this.probed = probe;
    return probe;
  }

  /** Whether /tmp can be a sized tmpfs here, and why not. */
  tmpSizeSupport(): { supported: boolean; reason: string | null } {
    const probe = this.probe();
    if (!probe.available) return { supported: false, reason: `bwrap is not available: ${probe.reason}` };
    return this.tmpSize
      ? { supported: true, reason: null }
      : {
          supported: false,
          reason: `${probe.version ?? "this bwrap"} cannot size a tmpfs (--size needs bubblewrap 0.5 or later)`,
        };
  }

  /** The shared gate, started (as root): needs util-linux's nsenter, mount and umount. */
  private startGate(program: string): WorkspaceGate {
    if (sharedGate === null) {
      const searchPath = `${this.opts.host.path}:${SYSTEM_PATH}`;
      const find = (name: string) => {
        const found = findOnPath(name, searchPath);
        if (found === null) throw new Error(`${name} is not installed (util-linux)`);
        return found;
      };
      sharedGate = new WorkspaceGate({
        bwrap: program,
        nsenter: find("nsenter"),
        mount: find("mount"),
        umount: find("umount"),
      });
    }
    sharedGate.start();
    return sharedGate;
  }

  /** The gate, for a run as a sandbox's own uid (started again if it died). */
  private requireGate(): WorkspaceGate {
    if (this.gate === null) throw new SpawnError("EBWRAP", "the workspace gate is not running");
    this.gate.start();
    return this.gate;
  }

  /** The workspace's path in the gate; a failure to give it is the sandbox's not being set up (EBWRAP). */
  private gatePath(gate: WorkspaceGate, req: SpawnRequest): string {
    try {
      return gate.pathFor(req.placement.workspaceDir);
    } catch (err) {
      throw new SpawnError("EBWRAP", withoutHostPaths((err as Error).message));
    }
  }

  /** A sandbox was removed: its workspace's way in goes. */
  release(placement: SandboxPlacement): void {
    this.gate?.release(placement.workspaceDir);
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
    if (!probe.available || this.program === null || this.view === null) {
      throw new SpawnError("EBWRAP", `bwrap is not available: ${probe.reason}`);
    }
    const identity = req.placement.identity;
    if (this.asRoot && identity === null) {
      // Never the host's root: a sandbox without its own uid does not run.
      throw new SpawnError("EBWRAP", `sandbox ${req.placement.sandboxId} has no uid of its own`);
    }
    const cwd = this.commandPath(req.placement, req.cwd);
    const missing = missingProgram(req.argv[0] ?? "", req.env.PATH ?? "", cwd, req.placement.workspaceDir);
    if (missing) throw new SpawnError(missing, `${req.argv[0]}: ${missing}`);
    // As root: through the gate, as the sandbox's uid; otherwise bwrap binds the directory the backend opened.
    const gate = identity === null ? null : this.requireGate();
    const workspaceFd = gate === null ? fs.openSync(req.placement.workspaceDir, O_WORKSPACE) : null;
    let child: ChildProcess;
    let args: string[];
    try {
      const workspace: WorkspaceSource = gate === null ? { fd: WORKSPACE_FD } : { path: this.gatePath(gate, req) };
      args = bwrapArguments({
        view: this.view,
        insideId: identity === null ? null : INSIDE_ID,
        network: req.placement.network,
        fds: { seccomp: this.seccomp === null ? null : FD.seccomp, status: FD.status, setup: FD.setup },
        workspace,
        cwd,
        env: req.env,
        tmpBytes: this.tmpSize ? req.placement.limits.tmp_bytes : null,
      });
      const commandLine = bwrapCommandLine(FD.args, req.argv);
      const leader =
        gate === null || identity === null
          ? { file: this.program, args: commandLine }
          : gate.enter(identity, this.program, commandLine);
      // Under the rlimits that stand in for cgroup controllers missing here (limits/limiter.ts).
      const launch = this.opts.limits?.launch(req.placement.limits, leader) ?? leader;
      child = spawn(launch.file, launch.args, {
        cwd: "/",
        // Nothing of the request (nor of the backend) in bwrap's own environment.
        env: {},
        detached: true,
        stdio: [req.stdin ? "pipe" : "ignore", "pipe", "pipe", "pipe", "pipe", "pipe", workspaceFd ?? "ignore", "pipe"],
      });
    } finally {
      if (workspaceFd !== null) fs.closeSync(workspaceFd);
    }
    const pipe = (fd: number | null) =>
      fd === null ? null : (child.stdio[fd] as (NodeJS.ReadWriteStream & { destroy(): void }) | null);
    for (const fd of [FD.args, FD.seccomp, FD.status, FD.setup]) {
      pipe(fd)?.on("error", () => {
        // bwrap died before reading or writing it: its exit says why.
      });
    }
    if (this.seccomp !== null) pipe(FD.seccomp)?.end(this.seccomp);
    else pipe(FD.seccomp)?.end();
    // The byte bwrap reads once the sandbox is set up; it then closes the pipe (run.ts watches for that).
    pipe(FD.setup)?.end(Buffer.from("x"));
    // Before bwrap reads its options it has started nothing: its leader joins the
    // sandbox's cgroup now, and all it starts is in it. A run never starts with fewer
    // limits than the sandbox says it has.
    let limits: RunLimits = { oomKilled: () => false, done: () => {} };
    if (child.pid !== undefined && this.opts.limits !== undefined) {
      try {
        limits = this.opts.limits.join(req.placement.sandboxId, req.placement.limits, child.pid);
      } catch (err) {
        child.kill("SIGKILL");
        for (const p of child.stdio) p?.destroy();
        throw new SpawnError("EBWRAP", `cannot apply the sandbox's limits: ${(err as Error).message}`);
      }
    }
    // Held, bwrap waits for its options; should the backend die meanwhile, the pipe ends
    // empty and bwrap, with no root but an empty one, cannot start the command.
    const writeArgs = () => pipe(FD.args)?.end(encodeArguments(args));
    if (!req.held) writeArgs();
    return new BwrapRun(
      child,
      req.held ? writeArgs : null,
      { status: pipe(FD.status) as Readable | null, setup: pipe(FD.setup) as Readable | null },
      req.argv[0] ?? "",
      limits,
    );
  }

  describe(placement: SandboxPlacement): DriverDescription {
    const identity = placement.identity;
    return {
      isolation: "bwrap",
      version: this.probe().version,
      user:
        identity !== null
          ? `nobody (${INSIDE_ID}) in a user namespace; on the host uid ${identity.uid}, the sandbox's own; no capabilities`
          : `${this.opts.host.username}, in a user namespace, without capabilities`,
      host_uid: identity?.uid ?? this.opts.host.uid,
      namespaces: ["user", "mount", "pid", "ipc", "uts", ...(placement.network ? [] : ["net"])],
      host_paths_read_only: this.readOnlyPaths(),
      syscall_filter:
        this.seccomp === null
          ? null
          : `seccomp: ${FILTER_RULES.length} syscalls refused (keyring, bpf, perf, mounts, namespaces, modules, …)`,
    };
  }

  private readOnlyPaths(): string[] {
    const view = this.view;
    if (view === null) return [];
    return ["/usr", ...view.system.filter((e) => e.kind === "dir").map((e) => e.path), view.etcDir];
  }
}

/** Whether this bwrap takes `--size` (sizes the next --tmpfs), as its --help says. */
function supportsTmpSize(program: string): boolean {
  const help = spawnSync(program, ["--help"], { encoding: "utf8", timeout: 5000, env: {} });
  return /^\s*--size\b/m.test(`${help.stdout ?? ""}${help.stderr ?? ""}`);
}

/** How the probe starts a trial as a sandbox uid: through the gate, the workspace bound there. */
function gateLauncher(gate: WorkspaceGate): Launcher {
  return {
    workspace: (dir) => ({ path: gate.pathFor(dir) }),
    command: (identity, program, args) => gate.enter(identity, program, args),
    done: (dir) => gate.release(dir),
  };
}
