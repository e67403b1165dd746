// User-mode networking for a sandbox created with `--network` (docs/drivers.md,
// "Network modes"): the sandbox keeps a network namespace of its own, and a user-mode
// TCP/IP stack on the host (slirp4netns, Debian package `slirp4netns`) gives it an
// interface (tap0, 10.0.2.100/24, gateway 10.0.2.2, DNS 10.0.2.3) whose traffic leaves
// as the host's own sockets: the sandbox reaches what the host reaches, but never the
// host's loopback (`--disable-host-loopback`), and no host port is bound for it.
//
// How it reaches the sandbox's network namespace: were bwrap to make it
// (`--unshare-net`), it would belong to bwrap's *outer* user namespace, in which no
// process stays (bwrap nests a second one for --disable-userns), so only a process
// with CAP_SYS_ADMIN on the host could enter it. Instead bwrap is started through
// `unshare --user --map-root-user --net` (util-linux), as the uid it always runs as
// (a root daemon's sandbox uid, or the daemon's own), so bwrap's own process (the
// sandbox's leader, which lives as long as the sandbox) stays in a user namespace
// that uid owns and in the network namespace inside it. bwrap nests its user
// namespace below as always (--disable-userns, args.ts `givenNamespace`), and
// slirp4netns, started as that same uid, is given the leader's pid: it joins the
// leader's user namespace (its uid owns it, so it may), then its network namespace,
// then confines itself (`--enable-sandbox`: a mount namespace of its own and no
// capability; `--enable-seccomp`). Nothing of it runs as root, and nothing but the
// leader and slirp4netns runs for it.
//
// Why slirp4netns and not pasta: pasta drops to `nobody` before it enters a namespace
// it was not given a process of (as root), and in command mode it would be the
// sandbox's leader instead of bwrap; slirp4netns attaches to a namespace that exists.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import type { Readable, Writable } from "node:stream";
import { INSIDE_ID, SANDBOX_UID_FIRST } from "../identity.js";
import { findOnPath } from "./path-lookup.js";

/** What the sandbox's resolver is told: slirp4netns's DNS forwarder, which asks the host's. */
export const USER_NET_RESOLV_CONF = "nameserver 10.0.2.3\n";
/** How long slirp4netns may take to configure the interface. */
const READY_TIMEOUT_MS = 30_000;
const SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";
/** How long the probe's trial may take. */
const TRIAL_TIMEOUT_MS = 10_000;
/** The tun device slirp4netns opens to make a sandbox's tap0 (it opens no other). */
export const TUN_DEVICE = "/dev/net/tun";

export interface UserNetProbe {
  available: boolean;
  /** slirp4netns, when found and usable. */
  program: string | null;
  /** E.g. "slirp4netns 1.2.0"; null when unknown. */
  version: string | null;
  /** Why `--network` cannot be had here (and what to install), or null. */
  reason: string | null;
  /**
   * util-linux's unshare, which starts bwrap inside a user and network namespace of
   * bwrap's own uid (see above); null where --network cannot be had.
   */
  unshare: string | null;
}

/**
 * Whether user-mode networking can run under this daemon, tried: a bwrap with a
 * sandbox's user namespace options, started by unshare in a user and network
 * namespace of the uid sandboxes run as (as root: a sandbox uid), runs `true`.
 */
export function probeUserNet(opts: {
  hostPath: string;
  asRoot: boolean;
  program?: string;
  /** The bwrap sandboxes are started with; default: found on the PATH. */
  bwrap?: string;
  /** The tun device tried (tests: a device node of their own); default /dev/net/tun, the one slirp4netns opens. */
  tunDevice?: string;
}): UserNetProbe {
  const searchPath = `${opts.hostPath}:${SYSTEM_PATH}`;
  const program = opts.program ?? findOnPath("slirp4netns", searchPath);
  const refused = (reason: string): UserNetProbe => ({
    available: false,
    program,
    version: null,
    reason,
    unshare: null,
  });
  if (program === null) return refused("slirp4netns is not installed (Debian package slirp4netns)");
  const unshare = findOnPath("unshare", searchPath);
  if (unshare === null) return refused("unshare is not installed (util-linux)");
  const bwrap = opts.bwrap ?? findOnPath("bwrap", searchPath);
  if (bwrap === null) return refused("bwrap is not installed");
  // As root, as a sandbox's uid would (bwrap and slirp4netns never run as root for a sandbox).
  const runAs = opts.asRoot ? { uid: SANDBOX_UID_FIRST, gid: SANDBOX_UID_FIRST } : null;
  const inside = opts.asRoot ? { uid: INSIDE_ID, gid: INSIDE_ID } : daemonIds();
  const trial = spawnSync(
    unshare,
    [
      ...unshareOptions(),
      bwrap,
      "--cap-drop",
      "ALL",
      "--unshare-user",
      "--uid",
      String(inside.uid),
      "--gid",
      String(inside.gid),
      "--disable-userns",
      "--unshare-pid",
      "--ro-bind",
      "/",
      "/",
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--",
      "true",
    ],
    {
      encoding: "utf8",
      timeout: TRIAL_TIMEOUT_MS,
      env: {},
      cwd: "/",
      stdio: ["ignore", "ignore", "pipe"],
      ...(runAs !== null && runAs),
    },
  );
  if (trial.status !== 0) {
    const said = (trial.stderr || String(trial.error ?? `exit ${trial.status ?? trial.signal}`)).trim();
    return refused(
      `a user and network namespace for bwrap cannot be made here (${said.split("\n").join("; ")}); ` +
        `user namespaces may be restricted for ${runAs === null ? "this user" : "unprivileged uids"}`,
    );
  }
  const tun = tunProblem({ unshare, runAs, device: opts.tunDevice ?? TUN_DEVICE });
  if (tun !== null) return refused(tun);
  return { available: true, program, version: null, reason: null, unshare };
}

/**
 * Why slirp4netns could not open the tun device for a sandbox, tried as it would be: by
 * `runAs` (null: this process's uid) inside a user and network namespace of that uid's
 * own, made by `unshare` as for a sandbox's leader. Null when it opens.
 */
export function tunProblem(opts: {
  unshare: string;
  runAs: { uid: number; gid: number } | null;
  device?: string;
  /** Who runs it, in words (default: a sandbox's uid, or this daemon's). */
  who?: string;
}): string | null {
  const device = opts.device ?? TUN_DEVICE;
  const trial = spawnSync(opts.unshare, [...unshareOptions(), "/bin/sh", "-c", 'exec 3<>"$1"', "sh", device], {
    encoding: "utf8",
    timeout: TRIAL_TIMEOUT_MS,
    env: {},
    cwd: "/",
    stdio: ["ignore", "ignore", "pipe"],
    ...(opts.runAs !== null && { uid: opts.runAs.uid, gid: opts.runAs.gid }),
  });
  if (trial.status === 0) return null;
  const who =
    opts.who ?? (opts.runAs === null ? `this daemon's uid (${process.getuid?.() ?? "?"})` : "a sandbox's uid");
  let st: fs.Stats;
  try {
    st = fs.statSync(device);
  } catch {
    return `${device} does not exist: slirp4netns needs the tun device to give a sandbox its interface (modprobe tun)`;
  }
  const mode = (st.mode & 0o7777).toString(8).padStart(4, "0");
  if (st.isCharacterDevice() && (st.mode & 0o006) !== 0o006) {
    return (
      `${device} is mode ${mode}, owned by ${st.uid === 0 ? "root" : `uid ${st.uid}`}: ${who} cannot open it, ` +
      `and slirp4netns runs as that uid for a sandbox (never as root); ` +
      `fix: chmod 0666 ${device} (as udev's default rule makes it), or keep it so with a udev rule ` +
      `(KERNEL=="tun", MODE="0666" in /etc/udev/rules.d/)`
    );
  }
  const said = (trial.stderr || String(trial.error ?? `exit ${trial.status ?? trial.signal}`)).trim();
  return `${who} cannot open ${device} (mode ${mode}) as slirp4netns would for a sandbox: ${said.split("\n").join("; ")}`;
}

/** The daemon's own uid and gid: what a command is inside when the daemon is not root. */
export function daemonIds(): { uid: number; gid: number } {
  return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

/** What `unshare` is told to start bwrap inside a user and network namespace of the daemon's own, as its root. */
export function unshareOptions(): string[] {
  return ["--user", "--map-root-user", "--net", "--"];
}

/** A sandbox's user-mode network: slirp4netns, attached to its network namespace. */
export class UserNetLink {
  /** Resolves once slirp4netns has ended, with why. */
  readonly ended: Promise<string>;
  private stopped = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly exitPipe: Writable | null,
  ) {
    this.ended = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve(`slirp4netns ended (${signal ?? `exit ${code}`})`));
      child.once("error", (err) => resolve(`slirp4netns could not start: ${err.message}`));
    });
  }

  /**
   * Attaches slirp4netns to the sandbox's network namespace and resolves once tap0
   * (and lo) are configured; rejects saying why not. `leaderPid`: the sandbox's leader
   * (bwrap, started by unshare), whose user and network namespaces it joins, as `as`
   * (the uid that made them; null: the daemon's own). It ends when `stop()` is called
   * or the backend dies (its exit pipe closes).
   */
  static attach(program: string, leaderPid: number, as: { uid: number; gid: number } | null): Promise<UserNetLink> {
    const child = spawn(
      program,
      [
        "--configure",
        "--mtu=65520",
        "--disable-host-loopback",
        "--enable-sandbox",
        "--enable-seccomp",
        "--ready-fd=3",
        "--exit-fd=4",
        // The pid form: not as root, --enable-sandbox joins the user namespace of the pid it
        // was given (slirp4netns 1.2, main.c), and of no path.
        String(leaderPid),
        "tap0",
      ],
      // Its own messages are not wanted (it is quiet unless something is wrong: then its exit says so).
      { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], env: {}, cwd: "/", ...(as !== null && as) },
    );
    const ready = child.stdio[3] as Readable | null;
    const exitPipe = child.stdio[4] as Writable | null;
    exitPipe?.on("error", () => {});
    const link = new UserNetLink(child, exitPipe);
    let said = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      said = (said + chunk.toString("utf8")).slice(-2000);
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        link.stop();
        reject(new Error(`slirp4netns did not configure the network within ${READY_TIMEOUT_MS / 1000} s`));
      }, READY_TIMEOUT_MS);
      let settled = false;
      const fail = (why: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        link.stop();
        const last = said
          .trim()
          .split("\n")
          .filter((l) => !l.startsWith("WARNING"))
          .slice(-1)[0];
        reject(new Error(last ? `${why}: ${last}` : why));
      };
      ready?.once("data", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(link);
      });
      ready?.on("error", () => {});
      void link.ended.then((why) => fail(why));
    });
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    // Closing its exit pipe ends it; a kill makes sure.
    this.exitPipe?.destroy();
    this.child.kill("SIGKILL");
  }
}
