// What some tests need from the machine, and the one way a test says it was skipped
// for lack of it: its name ends with "[skipped: needs NEED — why]". .ci/run reads that
// tag and fails on any skip its machine does not expect (docs/testing.md, "Skips").
// Never skip with a bare `it.skip`/`skipIf` or `ctx.skip()`: CI counts such a skip as
// unexpected wherever it happens.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { describe, it, type TestFunction } from "vitest";
import { BwrapDriver } from "../../src/backend/drivers/bwrap/driver.js";
import { daemonHost } from "../../src/backend/drivers/driver.js";
import { CgroupLimits } from "../../src/backend/drivers/limits/cgroups.js";
import { WorkspaceDisks } from "../../src/backend/drivers/limits/workspace-disk.js";
import { findOnPath } from "../../src/backend/drivers/bwrap/path-lookup.js";
import { probeUserNet, tunProblem } from "../../src/backend/drivers/bwrap/user-net.js";
import { BUN, canBuildBinary } from "./binary.js";
import { terminalSupport } from "../../src/platform/pty.js";
import { slurmProblem } from "./slurm.js";

const isRoot = process.getuid?.() === 0;
const hasTool = (tool: string, args = ["--version"]) => spawnSync(tool, args, { stdio: "ignore" }).error === undefined;
const bwrapDriver = new BwrapDriver({ host: daemonHost() });
const bwrap = bwrapDriver.probe();
const tmpSize = bwrapDriver.tmpSizeSupport();
/** How each cgroup controller can be used here, as a backend finds it (its base cgroups made and removed again). */
const cgroupControllers = (() => {
  const probe = new CgroupLimits({ dataDir: `/sbx-requirements/${process.pid}-${randomBytes(4).toString("hex")}` });
  const found = {
    memory: probe.controller("memory"),
    pids: probe.controller("pids"),
    cpu: probe.controller("cpu"),
    freezer: probe.controller("freezer"),
    cpuTime: probe.measuredPlaces("probe").cpuacct,
  };
  probe.close();
  return found;
})();
const workspaceDisks = new WorkspaceDisks({
  asRoot: isRoot,
  find: (program) => findOnPath(program, `${process.env.PATH ?? ""}:/usr/sbin:/usr/bin:/sbin:/bin`),
});
const cgroupWhy = (c: keyof typeof cgroupControllers) => {
  const st = cgroupControllers[c];
  return "problem" in st ? st.problem : "";
};
const userNet = probeUserNet({ hostPath: daemonHost().path, asRoot: isRoot });
/**
 * A uid of this run's own, without a passwd entry, that tests drop to (as root) to run
 * a daemon that is not root: never one of the host's users, nor another run's.
 */
export const UNPRIVILEGED_UID = (() => {
  const taken = new Set(
    fs
      .readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((l) => Number(l.split(":")[2])),
  );
  let uid: number;
  do uid = 1_900_000_000 + (randomBytes(4).readUInt32BE() % 99_000_000);
  while (taken.has(uid));
  return uid;
})();
/** Why a daemon dropped to UNPRIVILEGED_UID could not have --network (user) here, or null. */
const userNetAsUserWhy = (() => {
  if (!isRoot) return "dropping to an unprivileged uid needs root";
  if (!hasTool("setpriv")) return "setpriv is not installed (util-linux)";
  if (!hasTool("slirp4netns")) return "slirp4netns is not installed (Debian package slirp4netns)";
  const id = String(UNPRIVILEGED_UID);
  const trial = spawnSync(
    "setpriv",
    ["--reuid", id, "--regid", id, "--clear-groups", "--", "unshare", "--user", "--map-root-user", "--net", "true"],
    { encoding: "utf8", cwd: "/" },
  );
  if (trial.status !== 0) return `an unprivileged uid cannot make a user namespace here: ${trial.stderr.trim()}`;
  // slirp4netns opens the tun device as that uid, in that namespace: tried as it would.
  const unshare = findOnPath("unshare", `${process.env.PATH ?? ""}:/usr/sbin:/usr/bin:/sbin:/bin`);
  if (unshare === null) return "unshare is not installed (util-linux)";
  return tunProblem({
    unshare,
    runAs: { uid: UNPRIVILEGED_UID, gid: UNPRIVILEGED_UID },
    who: `an unprivileged uid (${UNPRIVILEGED_UID}, the daemon's)`,
  });
})();
/** bwrap's probe on this machine, as the backend makes it. */
export const BWRAP = bwrap;
const script = ["/usr/bin/script", "/bin/script"].find((p) => fs.existsSync(p));
/** Programs a sandbox finds in the host's /usr (it sees nothing else of the host). */
const SANDBOX_TOOLS = ["python3", "node", "cc", "make", "git", "tar", "curl", "ps"];
const missingInUsr = SANDBOX_TOOLS.filter((t) => !["/usr/bin", "/bin"].some((d) => fs.existsSync(`${d}/${t}`)));
/** An IPv4 address of this machine that is not loopback, or null. */
export const ADDRESS =
  Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a !== undefined && !a.internal && a.family === "IPv4")?.address ?? null;

/** Debian's chromium, for the pages sbx writes (driven by playwright-core). */
export const CHROMIUM = ["/usr/bin/chromium"].find((p) => fs.existsSync(p));

/** A statically linked busybox on this machine (what the tests' images are built from), or null. */
export const BUSYBOX_STATIC = (() => {
  for (const p of ["/bin/busybox", "/usr/bin/busybox"]) {
    try {
      // A static ELF has no program interpreter (PT_INTERP): its bytes never name ld-linux.
      const head = fs.readFileSync(p).subarray(0, 4096).toString("latin1");
      if (head.startsWith("\x7fELF") && !head.includes("ld-linux") && !head.includes("ld-musl")) return p;
    } catch {
      // not there
    }
  }
  return null;
})();

/** Each need: whether this machine meets it, and why not. */
const NEEDS = {
  /** bwrap sandboxes can run here (probed with the backend's own arguments). */
  bwrap: { met: bwrap.available, why: `bwrap cannot run here: ${bwrap.reason}` },
  /** The memory controller of a cgroup hierarchy can limit sandboxes here (v1 as root, or a delegated v2). */
  cgroupMemory: { met: !("problem" in cgroupControllers.memory), why: cgroupWhy("memory") },
  /** The pids controller likewise. */
  cgroupPids: { met: !("problem" in cgroupControllers.pids), why: cgroupWhy("pids") },
  /** The cpu controller likewise. */
  cgroupCpu: { met: !("problem" in cgroupControllers.cpu), why: cgroupWhy("cpu") },
  /** The cgroup freezer (v1's freezer controller as root, or v2's cgroup.freeze in a delegated subtree): sandbox pause. */
  cgroupFreezer: { met: !("problem" in cgroupControllers.freezer), why: cgroupWhy("freezer") },
  /** CPU time counted per cgroup (v1's cpuacct, or v2's cpu.stat): a command's own CPU time (limits/usage.ts). */
  cgroupCpuTime: { met: !("problem" in cgroupControllers.cpuTime), why: cgroupWhy("cpuTime") },
  /** Named volumes shared between sandboxes' own uids (root): setfacl sets a volume's default ACL. */
  setfacl: {
    met: !isRoot || hasTool("setfacl", ["--version"]),
    why: "setfacl is not installed (Debian package acl)",
  },
  /** A workspace of its own size can be made here (root, loop devices, mkfs.ext4), as the backend finds it. */
  workspaceDisk: { met: workspaceDisks.problem === null, why: workspaceDisks.problem ?? "" },
  /** util-linux's prlimit: the rlimits that stand in for missing cgroup controllers. */
  prlimit: { met: hasTool("prlimit"), why: "prlimit is not installed (util-linux)" },
  /** bwrap sizes a tmpfs (--size, bubblewrap 0.5 and later). */
  tmpSize: { met: tmpSize.supported, why: tmpSize.reason ?? "" },
  /**
   * User-mode networking (network mode user), as the backend probes it: slirp4netns, user
   * namespaces for the uid sandboxes run as, and /dev/net/tun opened by that uid (never
   * root: where the device is root-only, mode 0600 without udev, it is not met).
   */
  usernet: { met: userNet.available, why: `--network (user) cannot run here: ${userNet.reason}` },
  /** slirp4netns is installed (the user-network probe's own tests, which give it a tun device of their own). */
  slirp4netns: { met: hasTool("slirp4netns"), why: "slirp4netns is not installed (Debian package slirp4netns)" },
  /** User-mode networking under a daemon dropped (by root) to an unprivileged uid: setpriv, slirp4netns, user namespaces and the tun device for that uid. */
  usernetAsUser: { met: userNetAsUserWhy === null, why: userNetAsUserWhy ?? "" },
  /** Running as root (the attacks and host checks that only root can make or fail). */
  root: { met: isRoot, why: "not running as root" },
  /** A small tmpfs can be mounted (root, mount(8)): a real full disk. */
  tmpfs: {
    met: isRoot && hasTool("mount"),
    why: isRoot ? "mount(8) is missing" : "mounting a tmpfs needs root",
  },
  /** A non-loopback IPv4 address (a "remote" server on this machine). */
  address: { met: ADDRESS !== null, why: "this machine has no non-loopback IPv4 address" },
  /** A C compiler (cc): libraries and programs the attack tests build. */
  cc: { met: hasTool("cc"), why: "no C compiler (cc; Debian package gcc)" },
  /** libseccomp's headers and a C compiler: the syscall filter is checked against libseccomp's. */
  libseccomp: {
    met: hasTool("cc") && fs.existsSync("/usr/include/seccomp.h"),
    why: "libseccomp's headers or a C compiler are missing (Debian packages libseccomp-dev, gcc)",
  },
  /** The syscall filter is built for this architecture (x86_64, aarch64). */
  seccomp: { met: ["x64", "arm64"].includes(process.arch), why: `no syscall filter is built for ${process.arch}` },
  /** The host has /proc/sysrq-trigger (then a sandbox must not reach it). */
  sysrq: { met: fs.existsSync("/proc/sysrq-trigger"), why: "this kernel has no /proc/sysrq-trigger" },
  /** The ordinary programs a sandbox must keep running, in the host's /usr where a sandbox sees them. */
  tools: {
    met: missingInUsr.length === 0,
    why: `not in /usr/bin: ${missingInUsr.join(", ")} (Debian packages python3, nodejs, gcc, make, git, tar, curl, procps)`,
  },
  /** node-pty loads (a terminal for the terminal-session tests; the backend's PTY on Node). */
  pty: { met: terminalSupport() === null, why: `node-pty cannot be loaded: ${terminalSupport()}` },
  /** vi, in the host's /usr (a sandbox's full-screen editor in the terminal tests). */
  vi: { met: fs.existsSync("/usr/bin/vi"), why: "vi is not installed (Debian package vim-tiny)" },
  /** script(1) gives a command a pseudo-terminal. */
  script: { met: script !== undefined, why: "script(1) is missing (util-linux)" },
  groff: { met: hasTool("groff"), why: "groff is not installed (groff-base)" },
  /** man-db's man (sbx help --man formats and pages through `man -l -`). */
  man: { met: hasTool("man"), why: "man is not installed (Debian package man-db)" },
  zsh: { met: hasTool("zsh"), why: "zsh is not installed" },
  fish: { met: hasTool("fish"), why: "fish is not installed" },
  /** GNU time (/usr/bin/time -f %M): a finished process's peak resident memory. */
  time: { met: fs.existsSync("/usr/bin/time"), why: "GNU time is not installed (/usr/bin/time, Debian package time)" },
  /** Recorded traffic to check (SBX_WIRE_RECORD=DIR npm test; npm run test:contract records it first). */
  traffic: {
    met: Boolean(process.env.SBX_WIRE_RECORD),
    why: "no recorded traffic: SBX_WIRE_RECORD is not set (npm run test:contract records it first)",
  },
  /** perl, in the host's /usr (the terminal attack test's ioctl from inside a sandbox). */
  perl: { met: fs.existsSync("/usr/bin/perl"), why: "perl is not installed (Debian package perl-base)" },
  /** Python 3 runs docs/receipt-chain.md's check of a link, as another tool would. */
  python3: { met: hasTool("python3"), why: "python3 is not installed" },
  /** openssl checks a bundle's signature as docs/receipt-bundle.md says another machine can. */
  openssl: { met: hasTool("openssl", ["version"]), why: "openssl is not installed" },
  chromium: {
    met: CHROMIUM !== undefined,
    why: "chromium is not installed (/usr/bin/chromium, Debian package chromium)",
  },
  /** The release binary can be built (Bun from node_modules) or was given (SBX_TEST_BINARY). */
  binary: { met: canBuildBinary, why: "no Bun in node_modules to build the release binary" },
  /** Bun from node_modules runs a source file as the release binary would (its runtime seams). */
  bun: { met: fs.existsSync(BUN), why: "no Bun in node_modules (node_modules/.bin/bun)" },
  /** A statically linked busybox, the one program of the images the tests build (Debian package busybox-static). */
  busyboxStatic: {
    met: BUSYBOX_STATIC !== null,
    why: "no statically linked busybox (/bin/busybox; Debian package busybox-static)",
  },
  /** The CNCF distribution server, a real OCI registry the image tests start on the loopback (Debian package docker-registry). */
  registry: { met: fs.existsSync("/usr/bin/docker-registry"), why: "docker-registry is not installed" },
  /** skopeo, which pushes the tests' images into that registry (Debian package skopeo). */
  skopeo: { met: hasTool("skopeo"), why: "skopeo is not installed" },
  /**
   * A private single-node Slurm cluster (test/support/slurm.ts): root, slurm-wlm and munge
   * installed, and the cluster started. Asked only by the files that need it: asking starts
   * the file's cluster (stopped when the file ends), and a cluster that would not start
   * says why with its logs' last lines.
   */
  slurm: {
    get met() {
      return slurmProblem() === null;
    },
    get why() {
      return `no Slurm cluster: ${slurmProblem() ?? ""}`;
    },
  },
} as const;

export type Need = keyof typeof NEEDS;

/** script(1)'s path (where NEEDS.script is met). */
export const SCRIPT = script;

/** Whether every need is met here. */
export function meets(...needs: Need[]): boolean {
  return needs.every((n) => NEEDS[n].met);
}

/** The skip tag for the first need not met here ("[skipped: needs bwrap — …]"), or null. */
export function unmet(...needs: Need[]): string | null {
  const missing = needs.find((n) => !NEEDS[n].met);
  return missing === undefined ? null : `[skipped: needs ${missing} — ${NEEDS[missing].why}]`;
}

/** A describe block that runs where its needs are met; elsewhere one skipped test says which and why. */
export function describeNeeding(needs: Need | Need[], name: string, suite: () => void): void {
  const tag = unmet(...[needs].flat());
  if (tag === null) describe(name, suite);
  else describe(name, () => it.skip(tag, () => {}));
}

/** A test that runs where its needs are met; elsewhere it is skipped, its name saying which and why. */
export function itNeeding(needs: Need | Need[], name: string, fn: TestFunction, timeoutMs?: number): void {
  const tag = unmet(...[needs].flat());
  if (tag === null) it(name, fn, timeoutMs);
  else it.skip(`${name} ${tag}`, () => {});
}
