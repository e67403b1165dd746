// Finding and stopping the daemons that end-to-end tests start (by their SBX_HOME).

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import { runSbx, SBX_BIN, sbxEnv, TEST_BINARY } from "./cli.js";

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

/** Stops the home's daemon (politely, then by force) so no test leaves one behind. */
export async function stopDaemon(home: string): Promise<void> {
  await runSbx(["daemon", "stop"], { home, timeoutMs: 30_000 }).catch(() => undefined);
  for (const pid of daemonPids(home)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Runs `sbx daemon run ARGS` in the foreground as a child; resolves once it answers. */
export async function startForegroundDaemon(home: string, args: string[]): Promise<ChildProcess> {
  const [command, argv] = TEST_BINARY === undefined ? [process.execPath, ["--", SBX_BIN]] : [TEST_BINARY, []];
  const child = spawn(command, [...argv, "daemon", "run", ...args], {
    cwd: home,
    env: sbxEnv(home),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${stderr}`);
    const status = await runSbx(["daemon", "status"], { home });
    if (status.code === 0) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`daemon did not answer: ${stderr}`);
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
