// User-mode networking for a sandbox created with `--network` (docs/drivers.md,
// "Network modes"): the sandbox keeps a network namespace of its own, and a user-mode
// TCP/IP stack on the host (slirp4netns, Debian package `slirp4netns`) gives it an
// interface (tap0, 10.0.2.100/24, gateway 10.0.2.2, DNS 10.0.2.3) whose traffic leaves
// as the host's own sockets: the sandbox reaches what the host reaches, but never the
// host's loopback (`--disable-host-loopback`), and no host port is bound for it.
//
// Why slirp4netns and not pasta: a sandbox's network namespace belongs to bwrap's
// outer user namespace, in which no process stays (bwrap nests a second one,
// --disable-userns), so only a process with CAP_SYS_ADMIN on the host can enter it;
// pasta drops to `nobody` before it does (as root), slirp4netns enters it first and
// then confines itself (`--enable-sandbox`: a mount namespace of its own and no
// capability; `--enable-seccomp`). For the same reason it needs the daemon to be
// root: under an ordinary user `--network` is refused, saying so.

import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { findOnPath } from "./path-lookup.js";

/** What the sandbox's resolver is told: slirp4netns's DNS forwarder, which asks the host's. */
export const USER_NET_RESOLV_CONF = "nameserver 10.0.2.3\n";
/** How long slirp4netns may take to configure the interface. */
const READY_TIMEOUT_MS = 30_000;
const SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

export interface UserNetProbe {
  available: boolean;
  /** slirp4netns, when found and usable. */
  program: string | null;
  /** E.g. "slirp4netns 1.2.0"; null when unknown. */
  version: string | null;
  /** Why `--network` cannot be had here (and what to install), or null. */
  reason: string | null;
}

/** Whether user-mode networking can run under this daemon. */
export function probeUserNet(opts: { hostPath: string; asRoot: boolean; program?: string }): UserNetProbe {
  const program = opts.program ?? findOnPath("slirp4netns", `${opts.hostPath}:${SYSTEM_PATH}`);
  if (program === null) {
    return {
      available: false,
      program: null,
      version: null,
      reason: "slirp4netns is not installed (Debian package slirp4netns)",
    };
  }
  if (!opts.asRoot) {
    return {
      available: false,
      program,
      version: null,
      reason:
        "user-mode networking needs the daemon to run as root (a sandbox's network namespace can only be entered with CAP_SYS_ADMIN)",
    };
  }
  return { available: true, program, version: null, reason: null };
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
   * Attaches slirp4netns to the network namespace of `pid` (a process of the sandbox,
   * by its host pid) and resolves once tap0 is configured; rejects saying why not.
   * It ends when `stop()` is called or the backend dies (its exit pipe closes).
   */
  static attach(program: string, pid: number): Promise<UserNetLink> {
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
        "--netns-type=path",
        `/proc/${pid}/ns/net`,
        "tap0",
      ],
      // Its own messages are not wanted (it is quiet unless something is wrong: then its exit says so).
      { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], env: {}, cwd: "/" },
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
