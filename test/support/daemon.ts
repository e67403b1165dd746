// Finding, starting and stopping the daemons that end-to-end tests start (by their
// SBX_HOME), without spawning sbx for it: signals and a health request on the socket.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { resolvePaths } from "../../src/config/paths.js";
import { SBX_BIN, sbxEnv, TEST_BINARY } from "./cli.js";
import { until } from "./wait.js";

/** Pids of `sbx daemon run` processes whose SBX_HOME is this home (Linux /proc). */
export function daemonPids(home: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!cmdline.includes("daemon") || !cmdline.includes("run")) continue;
      const environ = fs.readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (environ.includes(`SBX_HOME=${home}`)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

function signal(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

/** Stops the home's daemon (SIGTERM, as `sbx daemon stop` does; SIGKILL if it lingers) so no test leaves one behind. */
export async function stopDaemon(home: string): Promise<void> {
  signal(daemonPids(home), "SIGTERM");
  try {
    await until(() => daemonPids(home).length === 0, 15_000, "the daemon to stop");
  } catch {
    signal(daemonPids(home), "SIGKILL");
    await until(() => daemonPids(home).length === 0, 5_000, "the daemon to die");
  }
}

/** Whether a daemon answers its health route on the home's socket. */
function answers(home: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ socketPath: resolvePaths({ SBX_HOME: home }).socketPath, path: "/api/v1/health" }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.setTimeout(2_000, () => req.destroy());
    req.on("error", () => resolve(false));
  });
}

/**
 * Runs `sbx daemon run ARGS` in the foreground as a child; resolves once it answers.
 * `leakFd`: the daemon inherits a pipe at that descriptor, as from a careless parent.
 * `uid` (the tests run as root): the daemon runs as that uid and gid, without
 * supplementary groups or capabilities (setpriv), in `env` (its HOME, TMPDIR its own).
 */
export async function startForegroundDaemon(
  home: string,
  args: string[],
  opts: { leakFd?: number; uid?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<ChildProcess> {
  const [sbx, sbxArgs] = TEST_BINARY === undefined ? [process.execPath, ["--", SBX_BIN]] : [TEST_BINARY, []];
  const id = String(opts.uid);
  const [command, argv] =
    opts.uid === undefined
      ? [sbx, sbxArgs]
      : ["setpriv", ["--reuid", id, "--regid", id, "--clear-groups", "--", sbx, ...sbxArgs]];
  const stdio: Array<"ignore" | "pipe"> = ["ignore", "ignore", "pipe"];
  if (opts.leakFd !== undefined) {
    while (stdio.length < opts.leakFd) stdio.push("ignore");
    stdio.push("pipe");
  }
  const child = spawn(command, [...argv, "daemon", "run", ...args], {
    cwd: home,
    env: opts.env ?? sbxEnv(home),
    stdio,
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  try {
    await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${stderr}`);
        return answers(home);
      },
      15_000,
      "the daemon to answer",
    );
  } catch (err) {
    child.kill("SIGKILL");
    throw new Error(`${(err as Error).message}\n${stderr}`);
  }
  return child;
}

/** SIGTERM to a foreground daemon, waiting for it to exit. */
export async function stopForegroundDaemon(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}
