// Whether bwrap can run sandboxes here, checked once when the backend starts
// (docs/drivers.md, "Probe"). Three steps, each with its own answer:
//
//   1. bwrap is on PATH and `bwrap --version` runs           → else: missing (fall back to none, said loudly)
//   2. a plain sandbox (user and pid namespaces, a /proc, /usr) runs `true`, as the
//      identity commands will have, and (as root) the workspace gate runs
//                                                            → else: not permitted here (fall back to none)
//   3. a sandbox with exactly the options a run gets (args.ts: the mount layout,
//      filter, status, environment) runs `true` and bwrap reports it executed
//                                                            → else: sbx's own options are broken: an error
//                                                              at daemon start, never a fall-back
//
// Step 3 is the one that proves the options every run gets; a change to args.ts that
// bwrap refuses stops the daemon here instead of making every command fail.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DaemonStartError } from "../../errors.js";
import type { DriverProbe } from "../driver.js";
import { type HostIdentity, INSIDE_ID } from "../identity.js";
import { bwrapArguments, type WorkspaceSource } from "./args.js";
import type { HostView } from "./host-view.js";
import type { WorkspaceGate } from "./gate.js";
import { parseStatus } from "./status.js";

const INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";
const TRIAL_TIMEOUT_MS = 10_000;

export interface ProbeInput {
  program: string | null;
  view: HostView;
  /** The identity the trials run as (the backend is root), or null: the backend's own. */
  identity: HostIdentity | null;
  /** The syscall filter every run loads, or null where none is built for this architecture. */
  seccomp: Buffer | null;
  /** How runs as `identity` start (the backend is root: through the workspace gate); null: directly. */
  launcher: Launcher | null;
  /** Why the workspace gate could not start (the backend is root), or null. */
  gateProblem: string | null;
}

/** Starting bwrap as a sandbox's uid (gate.ts). */
export interface Launcher {
  workspace(dir: string): WorkspaceSource;
  command(identity: HostIdentity, program: string, args: string[]): { file: string; args: string[] };
  done(dir: string): void;
}

/** Probes; throws DaemonStartError("sandbox_driver_broken") when step 3 fails after step 2 succeeded. */
export function probeBwrap(input: ProbeInput): DriverProbe {
  const { program } = input;
  if (program === null) return { available: false, reason: `bwrap is not on PATH: ${INSTALL_HINT}`, version: null };
  const version = spawnSync(program, ["--version"], { encoding: "utf8", timeout: 5000, env: {} });
  if (version.status !== 0) {
    return {
      available: false,
      reason: `${program} cannot run (${oneLine(version.stderr || String(version.error))}): ${INSTALL_HINT}`,
      version: null,
    };
  }
  const versionText = version.stdout.trim() || null;
  const as = input.identity === null ? "" : ` as an unprivileged user (uid ${input.identity.uid})`;
  const plain = trial(program, input.identity, null, plainSandbox(input), []);
  if (!plain.ok) {
    return {
      available: false,
      reason: `bwrap cannot create a sandbox here${as} (${plain.why}); user namespaces may be disabled or restricted`,
      version: versionText,
    };
  }
  if (input.identity !== null && input.launcher === null) {
    return {
      available: false,
      reason: `sbx runs as root here and cannot give a sandbox's own uid its workspace (${input.gateProblem ?? "no gate"})`,
      version: versionText,
    };
  }
  const full = fullTrial(program, input);
  if (!full.ok) {
    throw new DaemonStartError(
      "sandbox_driver_broken",
      `bwrap runs here, but not with sbx's sandbox options (${full.why}): this is a bug in sbx; ` +
        "start the daemon with --no-bwrap to run commands without isolation meanwhile",
    );
  }
  return { available: true, reason: null, version: versionText };
}

/** Step 2: user and pid namespaces with a /proc of their own, /usr read-only, the identity commands get. */
function plainSandbox(input: ProbeInput): string[] {
  const args = [
    "--unshare-user",
    ...(input.identity === null ? [] : ["--uid", String(INSIDE_ID), "--gid", String(INSIDE_ID)]),
    "--unshare-pid",
    "--ro-bind",
    "/usr",
    "/usr",
  ];
  for (const entry of input.view.system) {
    if (entry.kind === "link") args.push("--symlink", entry.target, entry.path);
    else args.push("--ro-bind", entry.path, entry.path);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--", "true");
  return args;
}

/** Step 3: the options of a real run, on an empty workspace, with the filter and the status report. */
function fullTrial(program: string, input: ProbeInput): { ok: true } | { ok: false; why: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-probe-"));
  const workspace = path.join(dir, "workspace");
  const fds: number[] = [];
  try {
    fs.mkdirSync(workspace, { mode: 0o700 });
    if (input.identity !== null) fs.chownSync(workspace, input.identity.uid, input.identity.gid);
    const open = (file: string, flags: number) => {
      const fd = fs.openSync(file, flags);
      fds.push(fd);
      return fd;
    };
    // Files stand in for the pipes of a real run: the trial is synchronous.
    const statusFile = path.join(dir, "status");
    let seccompFd: number | null = null;
    if (input.seccomp !== null) {
      fs.writeFileSync(path.join(dir, "seccomp"), input.seccomp);
      seccompFd = open(path.join(dir, "seccomp"), fs.constants.O_RDONLY);
    }
    fs.writeFileSync(path.join(dir, "setup"), "x");
    const launcher = input.identity === null ? null : input.launcher;
    const fixed = [
      launcher === null ? open(workspace, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY) : null,
      open(statusFile, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL),
      seccompFd,
      open(path.join(dir, "setup"), fs.constants.O_RDONLY),
    ];
    // Child fd numbers: 3 workspace (when bound by fd), 4 status, 5 seccomp, 6 setup (as the stdio array places them).
    const args = bwrapArguments({
      view: input.view,
      insideId: input.identity === null ? null : INSIDE_ID,
      network: "none",
      resolvConf: null,
      fds: { status: 4, seccomp: seccompFd === null ? null : 5, setup: 6 },
      workspace: launcher === null ? { fd: 3 } : launcher.workspace(workspace),
      runDir: null,
      cwd: "/workspace",
      env: { PATH: "/usr/bin:/bin" },
    });
    const result = trial(program, input.identity, launcher, [...args, "--", "true"], fixed);
    if (!result.ok) return result;
    const status = parseStatus(fs.readFileSync(statusFile, "utf8"));
    if (status.exitCode !== 0) return { ok: false, why: "bwrap did not report that it executed the command" };
    return { ok: true };
  } catch (err) {
    return { ok: false, why: (err as Error).message };
  } finally {
    for (const fd of fds) fs.closeSync(fd);
    input.launcher?.done(workspace);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs bwrap once as `identity`: through the launcher (the gate) when given, else with spawn's uid and gid. */
function trial(
  program: string,
  identity: HostIdentity | null,
  launcher: Launcher | null,
  args: string[],
  fds: Array<number | null>,
): { ok: true } | { ok: false; why: string } {
  const launch =
    launcher !== null && identity !== null ? launcher.command(identity, program, args) : { file: program, args };
  const result = spawnSync(launch.file, launch.args, {
    encoding: "utf8",
    timeout: TRIAL_TIMEOUT_MS,
    cwd: "/",
    env: {},
    stdio: ["ignore", "pipe", "pipe", ...fds.map((fd) => (fd === null ? "ignore" : fd))],
    ...(identity !== null && launcher === null && { uid: identity.uid, gid: identity.gid }),
  });
  if (result.status === 0) return { ok: true };
  const why = oneLine(
    result.stderr || (result.error ? String(result.error) : `exit ${result.status ?? result.signal}`),
  );
  return { ok: false, why };
}

function oneLine(text: string): string {
  return text.trim().split("\n").join("; ");
}

/** Whether this bwrap takes `--size` (sizes the next --tmpfs), as its --help says. */
export function supportsTmpSize(program: string): boolean {
  const help = spawnSync(program, ["--help"], { encoding: "utf8", timeout: 5000, env: {} });
  return /^\s*--size\b/m.test(`${help.stdout ?? ""}${help.stderr ?? ""}`);
}

/** How the probe starts a trial as a sandbox uid: through the gate, the workspace bound there. */
export function gateLauncher(gate: WorkspaceGate): Launcher {
  return {
    workspace: (dir) => ({ path: gate.pathFor(dir) }),
    command: (identity, program, args) => gate.enter(identity, program, args),
    done: (dir) => gate.release(dir),
  };
}
