// `sbx daemon run`: the backend as a long-lived process. Holds a pid file, serves
// until SIGTERM/SIGINT (or an abort signal, or idleness), then closes gracefully:
// stops accepting, ends running process groups, removes the socket and pid file.

import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { VERSION } from "../version.js";
import { DaemonStartError } from "./errors.js";
import { parseFaultSpec } from "./http/faults.js";
import { dataDirInUse, listenerAnswers } from "./http/ownership.js";
import { type BackendHandle, type BackendOptions, startBackend } from "./backend.js";

/** What `sbx daemon run` may serve beside /api/v1 (the MCP server at /mcp): http/mount.ts. */
export type { Mount } from "./http/mount.js";

export interface DaemonOptions extends BackendOptions {
  /** Default <dataDir>/daemon.pid. */
  pidFile?: string;
  /** Stops the daemon when aborted (as SIGTERM would). */
  signal?: AbortSignal;
  /** Stop on SIGTERM/SIGINT. Default true. */
  handleSignals?: boolean;
  /** Called once the backend listens. */
  onReady?: (handle: BackendHandle) => void;
}

/**
 * Closes what this process inherited without close-on-exec beyond stdin, stdout and
 * stderr (a shell's or a CI runner's leaked pipes and files): every child would inherit
 * them in turn — bwrap, and through it each sandboxed command, which could then write
 * to them. (Node marks the first 16 close-on-exec itself, libuv's
 * uv_disable_stdio_inheritance; not the rest.) The runtime's own descriptors are
 * close-on-exec; Node's IPC channel, when there is one, is kept. Returns what was closed.
 */
export function closeInheritedDescriptors(): number[] {
  const keep = new Set([0, 1, 2, Number(process.env.NODE_CHANNEL_FD ?? -1)]);
  const closed: number[] = [];
  let names: string[];
  try {
    names = fs.readdirSync("/proc/self/fd");
  } catch {
    return closed; // no /proc: nothing to find them by
  }
  for (const name of names) {
    const fd = Number(name);
    if (keep.has(fd)) continue;
    try {
      const flags = /^flags:\s+([0-7]+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
      if (flags === undefined || (Number.parseInt(flags, 8) & O_CLOEXEC) !== 0) continue;
      fs.closeSync(fd);
      closed.push(fd);
    } catch {
      // gone already (the listing's own descriptor)
    }
  }
  return closed;
}

const O_CLOEXEC = 0o2000000;

/** How long a live pid-file owner gets to start answering before its file is treated as stale. */
const STARTING_DAEMON_WAIT_MS = 2000;

/**
 * Runs the daemon until it is told to stop or goes idle, then closes it. Throws a
 * DaemonStartError `daemon_already_running` when another daemon owns the pid file and
 * answers on its socket.
 */
export async function runDaemon(opts: DaemonOptions): Promise<void> {
  // A bad fault spec is the user's to fix whatever else is wrong (a daemon already running, say).
  if (opts.faults !== undefined) parseFaultSpec(opts.faults);
  const log = opts.log ?? (() => {});
  const pidFile = opts.pidFile ?? path.join(opts.dataDir, "daemon.pid");
  fs.mkdirSync(path.dirname(pidFile), { recursive: true, mode: 0o700 });
  await acquirePidFile(pidFile, opts);

  let stopReason: ((why: string) => void) | undefined;
  const stopped = new Promise<string>((resolve) => {
    stopReason = resolve;
  });
  const stop = (why: string) => stopReason?.(why);

  const onSignal = (sig: NodeJS.Signals) => stop(sig);
  const onAbort = () => stop("stop requested");
  const handleSignals = opts.handleSignals ?? true;
  let handle: BackendHandle;
  try {
    handle = await startBackend({
      ...opts,
      onIdle: () => {
        opts.onIdle?.();
        stop("idle");
      },
    });
  } catch (err) {
    releasePidFile(pidFile);
    throw err;
  }
  if (handleSignals) {
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }
  if (opts.signal?.aborted) stop("stop requested");
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  log(`sbx daemon ${VERSION} running (pid ${process.pid})`);
  opts.onReady?.(handle);

  try {
    const why = await stopped;
    log(`stopping: ${why}`);
    await handle.close();
  } finally {
    if (handleSignals) {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    }
    opts.signal?.removeEventListener("abort", onAbort);
    releasePidFile(pidFile);
  }
  log("stopped");
}

async function acquirePidFile(pidFile: string, opts: DaemonOptions): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(pidFile, "wx", 0o600);
      try {
        fs.writeSync(fd, `${process.pid}\n`);
      } finally {
        fs.closeSync(fd);
      }
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const pid = readPid(pidFile);
    // A backend holding the data directory owns it, answering yet or not (it may be recovering).
    if (pid !== null && isAlive(pid) && ((await dataDirInUse(opts.dataDir)) === true || (await answersSoon(opts)))) {
      throw new DaemonStartError("daemon_already_running", `the sbx daemon is already running (pid ${pid})`);
    }
    // Stale: its process is gone, or it never came to answer.
    opts.log?.(`replacing stale pid file ${pidFile}${pid === null ? "" : ` (pid ${pid})`}`);
    fs.rmSync(pidFile, { force: true });
  }
  throw new DaemonStartError("daemon_already_running", `could not take the pid file ${pidFile}`);
}

function readPid(pidFile: string): number | null {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is just not ours to signal.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether the daemon's listener answers, giving a daemon that is still starting a moment. */
async function answersSoon(opts: DaemonOptions): Promise<boolean> {
  const deadline = Date.now() + STARTING_DAEMON_WAIT_MS;
  for (;;) {
    if (await daemonAnswers(opts)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}

function daemonAnswers(opts: DaemonOptions): Promise<boolean> {
  if (opts.socketPath) return listenerAnswers({ socketPath: opts.socketPath }, 500);
  // Port 0 is any free port: nothing to ask.
  if (!opts.listen || opts.listen.port === 0) return Promise.resolve(false);
  return listenerAnswers(opts.listen, 500);
}

/** Removes the pid file if it is still ours. */
function releasePidFile(pidFile: string): void {
  if (readPid(pidFile) === process.pid) fs.rmSync(pidFile, { force: true });
}
