// The `bwrap` driver (docs/drivers.md): each sandbox one live bubblewrap environment
// that its commands enter. The mechanisms live one per file beside this one:
//
//   host-view.ts    the host's facts the mount layout needs (read once, at the probe)
//   args.ts         bwrap's options for one run: a pure function (namespaces, mounts,
//                   identity, environment inside only, filter, status report)
//   ../identity.ts  which host uid a sandbox's commands are (their own when root)
//   ../seccomp/     the syscall filter's BPF program
//   gate.ts         how a sandbox's uid reaches its workspace when the backend is root
//   path-lookup.ts  "command not found" before bwrap starts; bwrap on PATH
//   environment.ts  one live sandbox: bwrap, held until placed, whose command is the init
//   entered-run.ts  one command the init started on request, as the backend sees it
//   io-socket.ts    the socket a sandbox's init connects each command's streams to
//   status.ts       bwrap's --json-status-fd: the sandbox's pid 1
//   start-failure.ts  why a sandbox could not be set up, without host paths
//   probe.ts        can bwrap run here, and do our options work
//
// Nothing of a request reaches bwrap's own process: it is started with an empty
// environment, its options come through a pipe, a command's environment goes to the
// init inside, and when the backend is root it is started (through the gate) as the sandbox's
// own unprivileged uid, so the user namespace it makes maps to that uid, never to the
// host's root.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Duplex } from "node:stream";
import { WORKSPACE } from "../../../protocol/types.js";
import { terminalAddonFile } from "../../../platform/pty.js";
import { sandboxInitProgram } from "../../../platform/self.js";
import { INIT_VERB, TERMINAL_ADDON_FLAG } from "../../../sandbox-init/init.js";
import { closeEgressProxy, EGRESS_FLAG, type EgressHub, openEgressProxy } from "./egress-proxy.js";
import { hostLoaderFor } from "./image-root.js";
import {
  type DriverDescription,
  type DriverHost,
  type DriverProbe,
  type EnvironmentStatus,
  type EnvironmentStopped,
  type SandboxChild,
  type SandboxDriver,
  type SandboxPlacement,
  SpawnError,
  type SpawnRequest,
} from "../driver.js";
import { type HostIdentity, INSIDE_ID, SANDBOX_UID_FIRST } from "../identity.js";
import type { Limiter, RunLimits } from "../limits/limiter.js";
import { notMeasured } from "../limits/usage.js";
import { buildFilter, encodeFilter } from "../seccomp/bpf.js";
import { FILTER_RULES } from "../seccomp/policy.js";
import { hostArch } from "../seccomp/syscalls.js";
import { bwrapArguments, bwrapCommandLine, encodeArguments } from "./args.js";
import { LiveSandbox, removeRunDir } from "./environment.js";
import { WorkspaceGate } from "./gate.js";
import { type HostView, readHostView } from "./host-view.js";
import { StreamSocket } from "./io-socket.js";
import { USER_NET_RESOLV_CONF, UserNetLink, type UserNetProbe, daemonIds, unshareOptions } from "./user-net.js";
import { findOnPath, missingProgram } from "./path-lookup.js";
import { gateLauncher, probeBwrap, supportsTmpSize } from "./probe.js";
import { withoutHostPaths } from "./start-failure.js";

export interface BwrapDriverOptions {
  /** Who the daemon runs as (root: each sandbox's commands run as its own uid) and its PATH (where bwrap is found). */
  host: DriverHost;
  /** The bwrap program; default: found on PATH. */
  program?: string;
  /** Where /etc is read from (tests); default /etc. */
  etcDir?: string;
  /**
   * node-pty's native addon the init opens terminals with, on Node; default: the one
   * installed with sbx (platform/pty.ts). Tests name one that is not there: terminals
   * are then refused, as on an installation whose addon was never built.
   */
  terminalAddon?: string;
  /** The sandboxes' limits (limits/): each sandbox's held leader joins its cgroup before it goes on. */
  limits?: Limiter;
  /**
   * The backend's directory for its sandboxes' io sockets (<dataDir>/run): emptied when
   * the first sandbox starts (what a killed backend left). Default (a driver made
   * without a backend, in tests): a new directory under the temporary directory.
   */
  runDir?: string;
  /** Where a sandbox that ended by itself is said. */
  log?: (line: string) => void;
  /** What carries network mode user (user-net.ts), as the driver set probed it; default: none here. */
  userNet?: UserNetProbe;
  /** The sandboxes' egress proxies (network allow-list; ../../egress); without it allow-list cannot start. */
  egress?: EgressHub;
}

/**
 * Where each descriptor sits in bwrap (the spawn's stdio array): 0 and 1 are the
 * init's requests and events, 2 the complaints of bwrap and the init.
 */
const FD = {
  args: 3,
  status: 4,
  seccomp: 5,
  /** The workspace and the run directory, bound by descriptor when bwrap runs as the backend's own user. */
  workspace: 6,
  runDir: 7,
  /** The init's executable (node, or the release binary) and, on Node, its file: started from these. */
  initExecutable: 8,
  initScript: 9,
  /** node-pty's native addon, on Node: the init opens the sandbox's terminals with it (platform/pty.ts). */
  terminalAddon: 10,
} as const;
const O_DIRECTORY = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;
/** The init's own environment (a command's is in its request). */
const INIT_ENVIRONMENT = { HOME: WORKSPACE, LANG: "C.UTF-8" };
/**
 * node for the init: no warnings on its stderr; its file, read from a descriptor, is
 * an ES module found by that name (there is no package.json inside); a small heap.
 */
const NODE_INIT_FLAGS = [
  "--no-warnings",
  "--experimental-default-type=module",
  "--preserve-symlinks-main",
  "--max-semi-space-size=1",
];

/** A sandbox without cgroup limits: nothing to tell, nothing to leave. */
const NO_LIMITS: RunLimits = { oomKilled: () => false, done: () => {} };
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
  /** Each sandbox's live environment, by placement (environmentKey). */
  private readonly live = new Map<string, LiveSandbox>();
  private runCount = 0;
  private runRoot: string | null = null;
  private ownRunRoot = false;
  private runDirCount = 0;

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
        setpriv: findOnPath("setpriv", searchPath),
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

  /** A sandbox was removed: its environment ends, its workspace's way in goes. */
  release(placement: SandboxPlacement): void {
    void this.live.get(environmentKey(placement))?.stop();
    this.gate?.release(placement.workspaceDir);
  }

  workspacePath(_placement: SandboxPlacement): string {
    return WORKSPACE;
  }

  commandPath(placement: SandboxPlacement, hostPath: string): string {
    // In an image sandbox's own root (its WorkingDir, docs/images.md): that path from /.
    const root = placement.rootDir ?? null;
    if (root !== null) {
      const inRoot = path.relative(root, hostPath);
      if (!inRoot.startsWith("..") && !path.isAbsolute(inRoot)) return `/${inRoot.split(path.sep).join("/")}`;
    }
    const rel = path.relative(placement.workspaceDir, hostPath);
    return rel === "" ? WORKSPACE : path.posix.join(WORKSPACE, rel.split(path.sep).join("/"));
  }

  /**
   * A sandbox's terminal is opened by its init, inside it (its own devpts): Bun's terminal
   * in the release binary; on Node, node-pty's addon, given to the init by descriptor.
   */
  terminalSupport(): string | null {
    try {
      terminalAddonFile(this.opts.terminalAddon);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  spawn(req: SpawnRequest): SandboxChild {
    const cwd = this.commandPath(req.placement, req.cwd);
    // "command not found" before anything is asked of the sandbox, where the host can
    // tell (the init answers the same for what only the sandbox can: under /tmp).
    // An image's root is not the host's: there only the init can tell.
    const missing =
      (req.placement.rootDir ?? null) === null
        ? missingProgram(req.argv[0] ?? "", req.env.PATH ?? "", cwd, req.placement.workspaceDir)
        : null;
    if (missing) throw new SpawnError(missing, `${req.argv[0]}: ${missing}`);
    const sandbox = this.environmentFor(req.placement);
    const run = sandbox.enter({
      id: `r${(++this.runCount).toString(36)}`,
      argv: req.argv,
      env: req.terminal === undefined ? req.env : { TERM: "xterm-256color", ...req.env },
      cwd,
      stdin: req.stdin || req.terminal !== undefined,
      ...(req.terminal !== undefined && { tty: req.terminal }),
    });
    // Held (until its admission is stored): the init gets it ready meanwhile.
    if (req.held) run.prepare();
    else run.proceed();
    return run;
  }

  environment(placement: SandboxPlacement): EnvironmentStatus {
    const live = this.live.get(environmentKey(placement));
    if (live === undefined || live.state === "ended") {
      return { state: "stopped", started_at: null, init_pid: null, processes: 0 };
    }
    return {
      state: live.state,
      started_at: new Date(live.startedAt).toISOString(),
      init_pid: live.initHostPid,
      processes: live.processes().length,
    };
  }

  async start(placement: SandboxPlacement): Promise<void> {
    await this.environmentFor(placement).ready;
  }

  async stop(placement: SandboxPlacement): Promise<EnvironmentStopped> {
    const live = this.live.get(environmentKey(placement));
    if (live === undefined || live.state === "ended") return { was_running: false, ended: [] };
    const own = new Set([live.initHostPid]);
    const ended = live
      .processes()
      .filter((p) => !own.has(p.pid) && p.ppid !== 0 && p.name !== "bwrap")
      .map((p) => p.name);
    await live.stop();
    return { was_running: true, ended };
  }

  disconnect(placement: SandboxPlacement, why: string): void {
    this.live.get(environmentKey(placement))?.endJoined(why);
  }

  async connect(placement: SandboxPlacement, port: number): Promise<Duplex> {
    const live = this.live.get(environmentKey(placement));
    if (live === undefined || live.state === "ended") throw new Error("the sandbox is not running");
    await live.ready;
    return live.connect(port);
  }

  /** slirp4netns and unshare, for a sandbox with network mode user; refused (a start failure) where they cannot run. */
  private requireUserNet(): { program: string; unshare: string } {
    const probe = this.opts.userNet;
    if (probe?.available !== true || probe.program === null || probe.unshare === null) {
      throw new SpawnError("EBWRAP", `network user is not available: ${probe?.reason ?? "no user-mode network stack"}`);
    }
    return { program: probe.program, unshare: probe.unshare };
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.live.values()].map((live) => live.stop()));
    if (this.runRoot !== null && this.ownRunRoot) removeRunDir(this.runRoot);
  }

  abandon(): void {
    // What runs is left to the next backend's restart recovery (a real crash would have
    // ended it: --die-with-parent); only the directory made outside the data directory goes.
    if (this.runRoot !== null && this.ownRunRoot) removeRunDir(this.runRoot);
  }

  /** The sandbox's live environment, started when it has none. */
  private environmentFor(placement: SandboxPlacement): LiveSandbox {
    const key = environmentKey(placement);
    const known = this.live.get(key);
    if (known !== undefined && known.state !== "ended") return known;
    const probe = this.probe();
    if (!probe.available || this.program === null || this.view === null) {
      throw new SpawnError("EBWRAP", `bwrap is not available: ${probe.reason}`);
    }
    const identity = placement.identity;
    if (this.asRoot && identity === null) {
      // Never the host's root: a sandbox without its own uid does not run.
      throw new SpawnError("EBWRAP", `sandbox ${placement.sandboxId} has no uid of its own`);
    }
    const started = this.startEnvironment(placement, this.program, this.view);
    this.live.set(key, started);
    return started;
  }

  private startEnvironment(placement: SandboxPlacement, program: string, view: HostView): LiveSandbox {
    const identity = placement.identity;
    // As root: through the gate, as the sandbox's uid; otherwise bwrap binds the directories the backend opened.
    const gate = identity === null ? null : this.requireGate();
    const init = sandboxInitProgram();
    const rootDir = placement.rootDir ?? null;
    if (rootDir !== null && init.script === null) {
      throw new SpawnError(
        "EBWRAP",
        "a sandbox from an image cannot start its init from the release binary yet (it runs under node only; docs/images.md)",
      );
    }
    const loader = rootDir === null ? null : hostLoaderFor(init.executable);
    const userNet = placement.network === "user" ? this.requireUserNet() : null;
    const volumes = placement.volumes ?? [];
    // A user-mode network's user and network namespaces are made for bwrap by unshare, as
    // the uid bwrap runs as (user-net.ts): what commands are inside is said to bwrap.
    const unshare = userNet?.unshare ?? null;
    const givenNamespace =
      unshare === null ? null : identity === null ? daemonIds() : { uid: INSIDE_ID, gid: INSIDE_ID };
    const runDir = this.newRunDir(identity);
    const io = new StreamSocket(path.join(runDir, "io.sock"));
    const proxy = openEgressProxy(this.opts.egress, placement, runDir, identity);
    const ioReady = proxy === null ? io.listen(identity) : Promise.all([io.listen(identity), proxy]).then(() => {});
    const fds: number[] = [];
    const open = (file: string, flags: number) => {
      const fd = fs.openSync(file, flags);
      fds.push(fd);
      return fd;
    };
    let child: ChildProcess;
    let args: string[];
    // User-mode networking: slirp4netns's resolver, told in a file beside the io socket.
    const resolvConf = userNet === null ? null : path.join(runDir, "resolv.conf");
    if (resolvConf !== null) fs.writeFileSync(resolvConf, USER_NET_RESOLV_CONF, { mode: 0o644 });
    try {
      const workspaceFd = gate === null ? open(placement.workspaceDir, O_DIRECTORY) : null;
      const runDirFd = gate === null ? open(runDir, O_DIRECTORY) : null;
      const exeFd = open(init.executable, fs.constants.O_RDONLY);
      const scriptFd = init.script === null ? null : open(init.script, fs.constants.O_RDONLY);
      const addonFd = scriptFd === null ? null : openTerminalAddon(this.opts.terminalAddon, open);
      args = bwrapArguments({
        view,
        insideId: identity === null ? null : INSIDE_ID,
        network: placement.network,
        givenNamespace,
        fds: { seccomp: this.seccomp === null ? null : FD.seccomp, status: FD.status, setup: null },
        workspace: gate === null ? { fd: FD.workspace } : { path: gate.pathFor(placement.workspaceDir) },
        runDir: gate === null ? { fd: FD.runDir } : { path: gate.pathFor(runDir) },
        resolvConf:
          resolvConf === null
            ? null
            : { path: path.join(gate === null ? runDir : gate.pathFor(runDir), "resolv.conf") },
        cwd: WORKSPACE,
        env: INIT_ENVIRONMENT,
        tmpBytes: this.tmpSize ? placement.limits.tmp_bytes : null,
        root: rootDir === null ? null : { path: gate === null ? rootDir : gate.pathFor(rootDir) },
        volumes: volumes.map((v) => ({
          source: { path: gate === null ? v.hostDir : gate.pathFor(v.hostDir) },
          path: v.path,
          readOnly: v.readOnly,
        })),
      });
      const egressFlag = proxy === null ? [] : [EGRESS_FLAG];
      const initArgv =
        scriptFd === null
          ? [fdPath(FD.initExecutable), INIT_VERB, ...egressFlag]
          : [
              // In an image's root the host's loader starts the init (image-root.ts).
              ...(loader === null ? [] : [loader.loader, "--library-path", loader.libraryPath]),
              fdPath(FD.initExecutable),
              ...NODE_INIT_FLAGS,
              fdPath(FD.initScript),
              INIT_VERB,
              ...(addonFd === null ? [] : [TERMINAL_ADDON_FLAG, fdPath(FD.terminalAddon)]),
              ...egressFlag,
            ];
      const commandLine = bwrapCommandLine(FD.args, initArgv);
      // bwrap, or (a user-mode network) unshare starting bwrap; as root, through the gate as the sandbox's uid.
      const started =
        unshare === null
          ? { file: program, args: commandLine }
          : { file: unshare, args: [...unshareOptions(), program, ...commandLine] };
      const groups = volumes.flatMap((v) => (v.gid === null ? [] : [v.gid]));
      const leader =
        gate !== null && identity !== null ? gate.enter(identity, started.file, started.args, groups) : started;
      // Under the rlimits that stand in for cgroup controllers missing here (limits/limiter.ts).
      const launch = this.opts.limits?.launch(placement.limits, leader) ?? leader;
      child = spawn(launch.file, launch.args, {
        cwd: "/",
        // Nothing of the backend in bwrap's own environment.
        env: {},
        detached: true,
        stdio: [
          "pipe",
          "pipe",
          "pipe",
          "pipe",
          "pipe",
          "pipe",
          workspaceFd ?? "ignore",
          runDirFd ?? "ignore",
          exeFd,
          scriptFd ?? "ignore",
          addonFd ?? "ignore",
        ],
      });
    } catch (err) {
      io.close();
      closeEgressProxy(proxy);
      removeRunDir(runDir);
      if (gate !== null) gate.release(runDir);
      throw new SpawnError("EBWRAP", withoutHostPaths((err as Error).message));
    } finally {
      for (const fd of fds) fs.closeSync(fd);
    }
    const pipe = (fd: number) => child.stdio[fd] as (NodeJS.ReadWriteStream & { destroy(): void }) | null;
    let limits: RunLimits = NO_LIMITS;
    for (const fd of [FD.args, FD.seccomp, FD.status]) pipe(fd)?.on("error", () => {});
    if (this.seccomp !== null) pipe(FD.seccomp)?.end(this.seccomp);
    else pipe(FD.seccomp)?.end();
    return new LiveSandbox({
      leader: child,
      statusFd: FD.status,
      // Until bwrap has its options nothing of the sandbox exists; should the backend
      // die meanwhile, the pipe ends empty and nothing starts.
      release: () => pipe(FD.args)?.end(encodeArguments(args)),
      // Before bwrap reads its options it has started nothing: its leader joins the
      // sandbox's cgroup now, and all the sandbox ever starts is in it.
      beforeRelease: (leaderPid: number) => {
        if (this.opts.limits === undefined) return;
        try {
          limits = this.opts.limits.join(placement.sandboxId, placement.limits, leaderPid);
        } catch (err) {
          throw new Error(`cannot apply the sandbox's limits: ${(err as Error).message}`);
        }
      },
      // Each command's OOM kills, counted from when it was asked for (Limiter.watch).
      watchMemory: () => this.opts.limits?.watch(placement.sandboxId) ?? NO_LIMITS,
      // Each command in a cgroup of its own, below the sandbox's (limits/usage.ts).
      measure: (runId: string) =>
        this.opts.limits?.measure(placement.sandboxId, runId) ??
        notMeasured("the backend has no limits mechanism configured (no cgroups)"),
      ...(userNet !== null && {
        // slirp4netns joins the namespaces bwrap was started in, which its process (the
        // leader) keeps, as the uid that made them: never as root.
        attachNetwork: () => UserNetLink.attach(userNet.program, child.pid ?? -1, identity),
      }),
      io,
      ioReady,
      onEnded: (sandbox) => {
        limits.done();
        closeEgressProxy(proxy);
        if (this.live.get(environmentKey(placement)) === sandbox) this.live.delete(environmentKey(placement));
        removeRunDir(runDir);
        if (gate !== null) gate.release(runDir);
      },
      log: this.opts.log ?? (() => {}),
    });
  }

  /** A new directory for one sandbox's io socket, reachable by its uid only. */
  private newRunDir(identity: HostIdentity | null): string {
    if (this.runRoot === null) {
      const given = this.opts.runDir;
      if (given !== undefined) {
        // What a backend killed before left behind: its sandboxes ended with it.
        fs.rmSync(given, { recursive: true, force: true });
        fs.mkdirSync(given, { recursive: true, mode: 0o700 });
      }
      const root = given ?? fs.mkdtempSync(path.join(os.tmpdir(), "sbx-run-"));
      this.ownRunRoot = root !== given;
      this.runRoot = root;
    }
    const dir = path.join(this.runRoot, (++this.runDirCount).toString(36));
    fs.mkdirSync(dir, { mode: 0o700 });
    if (identity !== null) fs.chownSync(dir, identity.uid, identity.gid);
    return dir;
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
      namespaces: ["user", "mount", "pid", "ipc", "uts", ...(placement.network === "host" ? [] : ["net"])],
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

/** Which live environment a placement is: a sandbox, with its workspace. */
function environmentKey(placement: SandboxPlacement): string {
  return `${placement.sandboxId}\0${placement.workspaceDir}`;
}

/** node-pty's addon opened for the init (Node), or null where there is none (terminals are then refused). */
function openTerminalAddon(given: string | undefined, open: (file: string, flags: number) => number): number | null {
  let file: string | null;
  try {
    file = terminalAddonFile(given);
  } catch {
    return null;
  }
  return file === null ? null : open(file, fs.constants.O_RDONLY);
}

/** A descriptor of the process itself, by the path exec can start it from. */
function fdPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}
