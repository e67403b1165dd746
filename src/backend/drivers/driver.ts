// The sandbox driver seam (docs/drivers.md). Every command the backend starts —
// an execution, a run of a supervised process, a job — is spawned by the driver of
// its sandbox: `bwrap` (namespaces, /workspace bound from the sandbox directory, the
// host read-only) or `none` (a plain process group in the workspace directory).
// A driver turns (argv, env, working directory, stdin) into a SandboxChild: the
// leader process whose pipes carry the output, a way to signal every process of the
// run, and the list of what is still alive. Nothing above this seam knows which
// driver it runs on.

import type { EventEmitter } from "node:events";
import os from "node:os";
import type { Readable, Writable } from "node:stream";
import type { Duplex } from "node:stream";
import type { CommandUsage, EndReason, Isolation, NetworkMode, SandboxLimits } from "../../protocol/types.js";
import type { TerminalSize } from "../../platform/pty.js";
import type { EgressPolicy } from "../egress/index.js";
import type { HostIdentity } from "./identity.js";
import { EGRESS_HTTP_PORT, EGRESS_SOCKS_PORT } from "../../sandbox-init/egress.js";

/** Where a sandbox's commands run. */
export interface SandboxPlacement {
  sandboxId: string;
  /** The host directory behind /workspace. */
  workspaceDir: string;
  /**
   * How commands reach the network (docs/drivers.md, "Network modes"): only the
   * sandbox's own loopback (none), outbound through a user-mode stack (user), or the
   * host's network itself (host; always under the none driver).
   */
  network: NetworkMode;
  /**
   * The sandbox's own unprivileged host uid and gid when the backend is root
   * (identity.ts); null: commands run as the backend's user.
   */
  identity: HostIdentity | null;
  /** The sandbox's resource limits (limits/spec.ts; null fields: no limit). */
  limits: SandboxLimits;
  /**
   * The host directory that is its root, writable (made from an image: docs/images.md);
   * null or absent: the host's system directories, read-only.
   */
  rootDir?: string | null;
  /** The image's Env, under what sbx sets and what the request asks for. */
  imageEnv?: Record<string, string>;
  /** Network allow-list: the sandbox's egress policy as it is now (read at each connection); null or absent otherwise. */
  egressPolicy?: (() => EgressPolicy | null) | null;
  /**
   * Named volumes it mounts (docs/operations.md, "Named volumes"): the host directory,
   * where inside, read-only or not, and the group its commands need to reach it (null: none).
   */
  volumes?: Array<{ hostDir: string; path: string; readOnly: boolean; gid: number | null }>;
}

export interface SpawnRequest {
  placement: SandboxPlacement;
  /** argv[0] is the program. */
  argv: string[];
  /** The host directory to start in: the workspace or a directory under it (already confined). */
  cwd: string;
  /** The complete environment (see commandEnvironment); nothing of the daemon's is added. */
  env: Record<string, string>;
  /** A pipe to the leader's stdin; otherwise stdin is /dev/null. */
  stdin: boolean;
  /**
   * Spawn it held (drivers whose `startsHeld` is true): nothing of the command runs
   * until the child's proceed(). The backend stores the run's start, its process
   * group included, in the same transaction as its admission meanwhile.
   */
  held?: boolean;
  /**
   * Start the command on a pseudo-terminal of the sandbox's own, this size (docs/drivers.md,
   * "Terminals"): its stdin, stdout and stderr are that terminal, its output one stream
   * (reported as stdout), its input written through the child's stdin.
   */
  terminal?: TerminalSize;
}

/** A run on a terminal: its window size follows the one attached (SandboxChild.terminal). */
export interface TerminalControl {
  resize(size: TerminalSize): void;
}

/**
 * Why a driver could not start a command: `ENOENT` (no such program), `EACCES` (not
 * executable), `EBWRAP` (bwrap cannot run), or another errno Node reported. What a
 * shell would answer for it is spawnFailure's (drivers/process-group.ts).
 */
export class SpawnError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "SpawnError";
  }

  /** A failure to spawn as Node reports it (thrown, or on the child's 'error' event). */
  static from(err: unknown): SpawnError {
    if (err instanceof SpawnError) return err;
    const code = (err as NodeJS.ErrnoException)?.code;
    return new SpawnError(typeof code === "string" ? code : "EUNKNOWN", (err as Error)?.message ?? String(err));
  }
}

/** How a run's command ended, as the driver tells it. */
export interface CommandEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  /**
   * The sandbox could not be set up and the command never ran: why, in one line without
   * a host path (bwrap's status report says whether it executed the command). Null
   * when it ran, or when the driver cannot tell (then code/signal say how it ended).
   */
  startFailure: string | null;
  /** Why the command ended when not by itself nor by the backend: `out_of_memory` (its sandbox's memory limit). */
  endReason: EndReason | null;
  /** What the command used (docs/operations.md, "Per-command usage"); its nulls say why; null: it never started. */
  usage: CommandUsage | null;
  /**
   * Where the command ran failed under it (Slurm: the allocation NODE_FAIL, PREEMPTED,
   * BOOT_FAIL, or gone): why, naming the node. Its own end is not known then (code and
   * signal are null). Absent or null: it ended by itself or by the backend.
   */
  interrupted?: string | null;
}

/**
 * The leader of a run as the backend handles it: a ChildProcess (none), or what
 * stands for a command started inside a live sandbox (bwrap). Events: 'exit' (code,
 * signal) when the command ended, 'close' (code, signal) once its output streams are
 * closed too, 'error' (a failure to spawn), and 'command-pid' (the command's own host
 * pid, once known, where it differs from `pid`).
 */
export interface LeaderProcess extends EventEmitter {
  /** The host process group that, ended, ends the run; undefined when nothing could be spawned. */
  readonly pid?: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** Every stream (or pipe) of the run, destroyed when the backend lets go of it. */
  readonly stdio: ReadonlyArray<{ destroy(): unknown } | null | undefined>;
  unref(): void;
}

/** A spawned run: the leader (its pipes and exit) and the processes it started. */
export interface SandboxChild {
  /** The leader, spawned by the driver: stdio, 'exit', 'close', 'error'. */
  readonly process: LeaderProcess;
  /** Set when the run is on a terminal (SpawnRequest.terminal). */
  readonly terminal?: TerminalControl;
  /** The host process group a restarted backend ends when it finds the run lost. */
  readonly pgid: number;
  /** Sends a signal to every process of the run; false when none is left. */
  signal(signal: NodeJS.Signals): boolean;
  /**
   * The command's output, chunk by chunk. A driver holds back what it writes itself
   * while it sets the sandbox up (bwrap's messages): output of a command that never
   * ran is never reported as such.
   */
  onOutput(listener: (stream: "stdout" | "stderr", chunk: Buffer) => void): void;
  /**
   * How the command ended, given how the leader ended (a driver may stand between
   * them): `done` is called once the driver knows, right away or a moment later.
   */
  commandEnd(code: number | null, signal: NodeJS.Signals | null, done: (end: CommandEnd) => void): void;
  /** Resolves true once the command started, false when the run ended without starting it. */
  readonly started: Promise<boolean>;
  /** Command names of the live processes of the run; empty once it is gone. Throws when /proc cannot be read. */
  members(): string[];
  /** A run spawned held starts its command (once); a no-op otherwise. */
  proceed(): void;
  /**
   * True where the command's own pid is learnt after the spawn (a live sandbox's run:
   * the leader's 'command-pid' event); until then the leader's pid is not the command's.
   */
  readonly reportsCommandPid?: boolean;
}

/** What a driver found when the backend started. */
export interface DriverProbe {
  available: boolean;
  /** Why it is not available (and what to install), or null. */
  reason: string | null;
  /** E.g. "bubblewrap 0.8.0"; null when unknown. */
  version: string | null;
}

/** What `sandbox show` says about how a sandbox's commands run. */
export interface DriverDescription {
  isolation: Isolation;
  /** E.g. "bubblewrap 0.8.0"; null for none. */
  version: string | null;
  /** The user commands run as, as they see it (and as the host does). */
  user: string;
  /** The host uid commands run as. */
  host_uid: number;
  /** Namespaces of their own (pid, ipc, uts, net, user, mount); empty for none. */
  namespaces: string[];
  /** The host paths commands can read (read-only) besides /workspace; null: everything the daemon can. */
  host_paths_read_only: string[] | null;
  /** The syscall filter commands run under, in a few words; null: none. */
  syscall_filter: string | null;
  /** The sandbox's allocation (the Slurm driver only). */
  slurm?: {
    job_id: string | null;
    state: string;
    reason: string | null;
    node: string | null;
    partition: string | null;
  };
}

export interface SandboxDriver {
  readonly isolation: Isolation;
  /** Whether a run ends when the backend dies (bwrap: --die-with-parent); otherwise it may outlive it. */
  readonly runsEndWithBackend: boolean;
  /**
   * Whether it can spawn a run held (SpawnRequest.held): the leader exists, its process
   * group known, and nothing of the command runs before proceed(). bwrap reads its
   * options from a pipe before anything else; a `none` run is the command itself.
   */
  readonly startsHeld: boolean;
  /** Checked once when the backend starts; the answer is kept. */
  probe(): DriverProbe;
  /** The workspace as commands see it ("/workspace" for bwrap, the host directory for none). */
  workspacePath(placement: SandboxPlacement): string;
  /** A host path inside the workspace, as commands see it. */
  commandPath(placement: SandboxPlacement, hostPath: string): string;
  /**
   * Starts the leader in its own process group. Throws a SpawnError (ENOENT, EACCES,
   * EBWRAP) when the program cannot be started; Node may also report that on the
   * child's 'error' event, leaving process.pid undefined.
   */
  spawn(req: SpawnRequest): SandboxChild;
  /** Why this driver cannot start a run on a terminal here, or null when it can. */
  terminalSupport(): string | null;
  describe(placement: SandboxPlacement): DriverDescription;
  /** The sandbox was removed: whatever the driver kept for it goes. */
  release?(placement: SandboxPlacement): void;
  /**
   * A driver whose sandboxes are live environments (bwrap): the environment's state
   * now. Null from drivers where each run stands alone (none).
   */
  environment?(placement: SandboxPlacement): EnvironmentStatus;
  /** Starts the sandbox's environment (when it is not running); rejects saying why it cannot. */
  start?(placement: SandboxPlacement): Promise<void>;
  /** Ends the sandbox's environment and everything in it; says what was running. */
  stop?(placement: SandboxPlacement): Promise<EnvironmentStopped>;
  /**
   * A connection to `port` on the sandbox's own loopback (published ports), when its
   * environment runs; rejects saying why not (nothing listens, it does not run).
   */
  connect?(placement: SandboxPlacement, port: number): Promise<Duplex>;
  /** Ends every connection `connect` joined for the sandbox, with an EnvironmentEndedError saying `why`. */
  disconnect?(placement: SandboxPlacement, why: string): void;
  /** The backend closes: every environment ends. */
  shutdown?(): Promise<void>;
  /**
   * A driver whose runs outlive the backend and leave their end where a restarted
   * backend reads it (slurm): the run an earlier backend started, followed again;
   * `had` is how much of each stream (as reported) the earlier one kept, `leaderAlive`
   * whether its recorded leader still runs on this machine. Null when the run never
   * got as far as starting its command (restart recovery then settles it as lost).
   */
  follow?(
    placement: SandboxPlacement,
    identity: RunIdentity,
    had: StreamBytes,
    leaderAlive: () => boolean,
  ): FollowedRun | null;
  /**
   * A simulated crash (tests): nothing is ended (restart recovery's business, as after
   * a crash of the backend alone), but what the driver made outside the data directory goes.
   */
  abandon?(): void;
}

/** Bytes of each output stream. */
export interface StreamBytes {
  stdout: number;
  stderr: number;
}

/** A run followed again after a restart of the backend (SandboxDriver.follow). */
export interface FollowedRun {
  /** Output the earlier backend had not kept, chunk by chunk, as it is found. */
  onOutput(listener: (stream: "stdout" | "stderr", chunk: Buffer) => void): void;
  /** How the command ended; `lost`: it ended without saying how (why, with the node when known). */
  readonly ended: Promise<FollowedEnd>;
  /** To every process of the run; false when it is gone. */
  signal(signal: NodeJS.Signals): boolean;
  /** Stops following (the backend closes); nothing of the run is ended. */
  stop(): void;
}

export type FollowedEnd =
  | { code: number | null; signal: NodeJS.Signals | null; lost: null }
  | { code: null; signal: null; lost: string };

/** A live sandbox environment as `sandbox show` tells it. */
/**
 * A connection joined to a port inside a sandbox (`connect`) was ended because the
 * sandbox's environment stopped or ended: its 'error' before its 'close'.
 */
export class EnvironmentEndedError extends Error {
  override name = "EnvironmentEndedError";
}

export interface EnvironmentStatus {
  /** paused: its processes frozen (the registry says it; a driver never answers it). */
  state: "running" | "starting" | "paused" | "stopped";
  /** When the running environment started (ISO 8601), or null. */
  started_at: string | null;
  /** The host pid of its init, or null. */
  init_pid: number | null;
  /** Processes in it now (its pid 1 and init included); 0 when stopped. */
  processes: number;
}

/** What stopping an environment ended. */
export interface EnvironmentStopped {
  /** Whether it was running (or starting). */
  was_running: boolean;
  /** Command names of the processes it ended (its pid 1 and init left out). */
  ended: string[];
}

/**
 * What a driver knows of the daemon it runs in, handed to it where the backend is
 * wired (never read inside a driver): who the daemon runs as and where it finds
 * programs of its own (bwrap). A command's environment is commandEnvironment's.
 */
export interface DriverHost {
  /** The daemon's uid: as root (0), bwrap runs commands as nobody. */
  uid: number;
  /** The daemon's user name, as `sandbox show` says who commands run as. */
  username: string;
  /** The daemon's PATH, searched for bwrap; never a command's PATH (BASE_PATH). */
  path: string;
}

/** This process's DriverHost: read once, where the backend starts. */
export function daemonHost(env: NodeJS.ProcessEnv = process.env): DriverHost {
  const uid = process.getuid?.() ?? -1;
  return { uid, username: userName(uid), path: env.PATH ?? "/usr/bin:/bin" };
}

/** The user's name, or "uid N" for a uid without a passwd entry (a container's `--user 12345`). */
function userName(uid: number): string {
  try {
    return os.userInfo().username;
  } catch {
    return `uid ${uid}`;
  }
}

/** The PATH commands start with. */
export const BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Which run a command belongs to, named in its environment. */
export type RunIdentity =
  | { kind: "execution"; id: string }
  | { kind: "process"; id: string; generation: number }
  | { kind: "job"; id: string };

const IDENTITY_VARIABLE: Record<RunIdentity["kind"], string> = {
  execution: "SBX_EXECUTION_ID",
  process: "SBX_PROCESS_ID",
  job: "SBX_JOB_ID",
};

/**
 * The environment every command starts from (docs/drivers.md), whatever the driver:
 * a small documented set plus what the request sets — never the daemon's own.
 */
/**
 * Network allow-list: where a command's programs find the sandbox's proxy (its init's
 * ports on the sandbox's loopback; docs/network.md), in both spellings programs read.
 * SOCKS with names resolved by the proxy (socks5h): the sandbox resolves nothing.
 */
const PROXY_URL = `http://127.0.0.1:${EGRESS_HTTP_PORT}`;
const SOCKS_URL = `socks5h://127.0.0.1:${EGRESS_SOCKS_PORT}`;
const NO_PROXY = "localhost,127.0.0.1,::1";
export const PROXY_ENVIRONMENT: Record<string, string> = {
  HTTP_PROXY: PROXY_URL,
  HTTPS_PROXY: PROXY_URL,
  ALL_PROXY: SOCKS_URL,
  NO_PROXY,
  http_proxy: PROXY_URL,
  https_proxy: PROXY_URL,
  all_proxy: SOCKS_URL,
  no_proxy: NO_PROXY,
  // Node 22.21 and 24 read the variables above for fetch only when told to.
  NODE_USE_ENV_PROXY: "1",
};

export function commandEnvironment(
  driver: SandboxDriver,
  placement: SandboxPlacement,
  identity: RunIdentity,
  cwd: string,
  requested: Record<string, string>,
): Record<string, string> {
  const workspace = driver.workspacePath(placement);
  return {
    PATH: BASE_PATH,
    HOME: workspace,
    LANG: "C.UTF-8",
    ...placement.imageEnv,
    PWD: driver.commandPath(placement, cwd),
    SBX_SANDBOX_ID: placement.sandboxId,
    SBX_WORKSPACE: workspace,
    [IDENTITY_VARIABLE[identity.kind]]: identity.id,
    ...(identity.kind === "process" && { SBX_PROCESS_GENERATION: String(identity.generation) }),
    ...(placement.network === "allow-list" && PROXY_ENVIRONMENT),
    ...requested,
  };
}
