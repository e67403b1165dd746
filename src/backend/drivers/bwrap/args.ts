// bwrap's options for one sandbox, built by a pure function from what the host looks
// like (host-view.ts) and what the run asks for (docs/drivers.md, "bwrap"). Every
// protection the driver claims is one line here, and each has a test that fails when
// it is removed (test/unit/bwrap-args.test.ts for the list, test/backend/attacks.test.ts
// for the effect). The options reach bwrap through a pipe (`--args`), so none of them —
// the environment included — shows in the sandbox's /proc/1/cmdline, and nothing of
// the request is ever in bwrap's own environment.

import { type NetworkMode, WORKSPACE } from "../../../protocol/types.js";
import { RUN_DIR_INSIDE } from "../../../sandbox-init/init.js";
import type { HostView } from "./host-view.js";
import { HOST_USR_INSIDE } from "./image-root.js";

/** The sandbox's hostname (its own uts namespace). */
export const SANDBOX_HOSTNAME = "sbx";

/** File descriptors bwrap inherits from the backend. */
export interface BwrapFds {
  /** The options themselves (`--args`): NUL-separated, read before bwrap does anything. */
  args: number;
  /** The syscall filter's BPF program (`--seccomp`), or null for none. */
  seccomp: number | null;
  /** Where bwrap reports the child's pid and, once the command was executed, its exit code (`--json-status-fd`). */
  status: number | null;
  /**
   * A pipe holding one byte that bwrap reads, then closes, once every mount and
   * namespace is in place (`--block-fd`): its end tells the backend the sandbox was
   * set up, before the command runs. Null: not watched.
   */
  setup: number | null;
}

/**
 * Where /workspace comes from: the directory the backend opened (`--bind-fd`: what is
 * mounted is what was opened), or, when bwrap runs as a sandbox's own uid, the path
 * the workspace gate gives that uid (gate.ts).
 */
export type WorkspaceSource = { fd: number } | { path: string };

export interface SandboxSpec {
  view: HostView;
  /**
   * The uid and gid commands have inside their user namespace; null: the same as
   * bwrap's own (a daemon that is not root). When the backend is root it starts bwrap
   * as the sandbox's unprivileged host uid (identity.ts), mapped to this one inside.
   */
  insideId: number | null;
  /**
   * The host's network (host), or a network namespace of its own: only a loopback
   * (none), or a loopback and the interface a user-mode stack attaches later (user).
   */
  network: NetworkMode;
  /**
   * Set when bwrap is started inside a user and network namespace made for it
   * (network user under a daemon that is not root, user-net.ts): the ids commands
   * have (the daemon's own, as otherwise). bwrap is root of that namespace there, so
   * it keeps the network it was given (no `--unshare-net`), passes on no capability
   * (`--cap-drop ALL`: root's default is to keep them) and maps the command to these
   * ids; its own user namespace, without further ones, is nested below as always.
   */
  givenNamespace?: { uid: number; gid: number } | null;
  /**
   * For network `user`: the file told as /etc/resolv.conf (slirp4netns's resolver),
   * bound read-only over the host's; null otherwise.
   */
  resolvConf: WorkspaceSource | null;
  fds: Omit<BwrapFds, "args">;
  workspace: WorkspaceSource;
  /**
   * The backend's directory for this sandbox (its io socket), bound read-only at
   * RUN_DIR_INSIDE; null: none (the probe's trial).
   */
  runDir: WorkspaceSource | null;
  /** The working directory as the command sees it (under /workspace). */
  cwd: string;
  /** The command's complete environment: set inside only (`--setenv`; bwrap's own environment is empty). */
  env: Record<string, string>;
  /** The size of /tmp, /var/tmp and /dev/shm, each a tmpfs (`--size`, bubblewrap 0.5 and later); null: the kernel's default (half the RAM). */
  tmpBytes?: number | null;
  /**
   * A root of its own, writable (a sandbox made from an image, docs/images.md): bound at
   * /, with the host's /usr read-only at HOST_USR_INSIDE (the init starts through the
   * host's loader there) instead of the host's system directories. Null or absent: the host's.
   */
  root?: WorkspaceSource | null;
  /** Named volumes (docs/operations.md, "Named volumes"): each bound at its path, read-only where asked. */
  volumes?: Array<{ source: WorkspaceSource & { path: string }; path: string; readOnly: boolean }>;
}

/** The options (everything before `--` and the command) for one run. Pure. */
export function bwrapArguments(spec: SandboxSpec): string[] {
  const { view, fds } = spec;
  const given = spec.givenNamespace ?? null;
  const args: string[] = [
    // Lifetime: ends with the backend; a session of its own (no terminal to push input into).
    "--die-with-parent",
    "--new-session",
    // Identity: a user namespace, no further ones inside. bwrap, never started as the
    // host's root for a run, gives the command no capability; where it is root of a
    // namespace made for it (givenNamespace), `--cap-drop ALL` says so.
    "--unshare-user",
    ...identityOptions(spec),
    "--disable-userns",
    // Namespaces of its own.
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--hostname",
    SANDBOX_HOSTNAME,
    "--unshare-cgroup-try",
    ...(spec.network === "host" || given !== null ? [] : ["--unshare-net"]),
  ];
  const root = spec.root ?? null;
  if (root !== null) {
    // Its own root, writable; the host's /usr only where the init's loader is read from.
    if ("fd" in root) args.push("--bind-fd", String(root.fd), "/");
    else args.push("--bind", root.path, "/");
    args.push("--ro-bind", "/usr", HOST_USR_INSIDE);
    if (spec.network === "host") args.push("--ro-bind-try", `${view.etcDir}/resolv.conf`, "/etc/resolv.conf");
  } else {
    // The host's system, read-only.
    args.push("--ro-bind", "/usr", "/usr");
    for (const entry of view.system) {
      if (entry.kind === "link") args.push("--symlink", entry.target, entry.path);
      else args.push("--ro-bind", entry.path, entry.path);
    }
    args.push("--ro-bind", view.etcDir, "/etc");
    for (const hidden of view.hiddenEtc) {
      if (hidden.dir) args.push("--tmpfs", hidden.inside, "--remount-ro", hidden.inside);
      else args.push("--ro-bind", "/dev/null", hidden.inside);
    }
    if (spec.network === "host" && view.resolvConfTarget !== null) {
      args.push("--ro-bind-try", view.resolvConfTarget, view.resolvConfTarget);
    }
  }
  if (spec.resolvConf !== null) {
    const at = root === null ? (view.resolvConfTarget ?? "/etc/resolv.conf") : "/etc/resolv.conf";
    if ("fd" in spec.resolvConf) args.push("--ro-bind-data", String(spec.resolvConf.fd), at);
    else args.push("--ro-bind", spec.resolvConf.path, at);
  }
  // A /proc of its own whose kernel settings are read-only; no /sys at all.
  args.push("--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys");
  if (view.sysrqTrigger) args.push("--ro-bind", "/dev/null", "/proc/sysrq-trigger");
  // /tmp, /var/tmp and /dev/shm, private tmpfs; each sized (the sandbox's tmp limit) so that a
  // write past it is ENOSPC inside. bwrap's /dev is a tmpfs it cannot size: read-only once
  // its nodes are made (writing a device node still works; a file there cannot be made).
  const size = spec.tmpBytes == null ? [] : ["--size", String(spec.tmpBytes)];
  args.push("--dev", "/dev", "--remount-ro", "/dev", ...size, "--tmpfs", "/dev/shm");
  args.push(...size, "--tmpfs", "/tmp", ...size, "--tmpfs", "/var/tmp");
  // The workspace.
  if ("fd" in spec.workspace) args.push("--bind-fd", String(spec.workspace.fd), WORKSPACE);
  else args.push("--bind", spec.workspace.path, WORKSPACE);
  // Named volumes, each where it was asked (never under /workspace: protocol/volumes.ts).
  for (const v of spec.volumes ?? []) args.push(v.readOnly ? "--ro-bind" : "--bind", v.source.path, v.path);
  // The backend's socket for this sandbox, read-only: nothing inside can replace it.
  if (spec.runDir !== null) {
    if ("fd" in spec.runDir) args.push("--ro-bind-fd", String(spec.runDir.fd), RUN_DIR_INSIDE);
    else args.push("--ro-bind", spec.runDir.path, RUN_DIR_INSIDE);
  }
  args.push("--chdir", spec.cwd);
  // The environment, inside only (bwrap's own is empty: nothing to clear first).
  for (const [name, value] of Object.entries(spec.env)) args.push("--setenv", name, value);
  if (fds.seccomp !== null) args.push("--seccomp", String(fds.seccomp));
  if (fds.status !== null) args.push("--json-status-fd", String(fds.status));
  if (fds.setup !== null) args.push("--block-fd", String(fds.setup));
  // Last, once every mount point exists: the sandbox's own root is read-only too (an image's is its own, writable).
  if (root === null) args.push("--remount-ro", "/");
  for (const arg of args) {
    // The options travel NUL-separated: a NUL inside one would make options of its own.
    if (arg.includes("\0")) throw new Error(`bwrap option contains a NUL byte: ${JSON.stringify(arg)}`);
  }
  return args;
}

/** Who the command is inside (`--uid`, `--gid`) and, where bwrap is root of the namespace it starts in, no capability. */
function identityOptions(spec: SandboxSpec): string[] {
  const given = spec.givenNamespace ?? null;
  if (given !== null) {
    return ["--cap-drop", "ALL", "--uid", String(given.uid), "--gid", String(given.gid)];
  }
  return spec.insideId === null ? [] : ["--uid", String(spec.insideId), "--gid", String(spec.insideId)];
}

/** The options as bwrap reads them from `--args FD`. */
export function encodeArguments(args: readonly string[]): Buffer {
  return Buffer.from(args.map((a) => `${a}\0`).join(""));
}

/** The command line bwrap itself is started with: only the pipe to read its options from, then the command. */
export function bwrapCommandLine(argsFd: number, argv: readonly string[]): string[] {
  return ["--args", String(argsFd), "--", ...argv];
}
