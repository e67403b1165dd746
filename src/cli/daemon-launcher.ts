// Starts the embedded backend when the local profile finds nobody listening (its
// socket absent, or refusing connections): requests go straight to the socket, and
// only a failed connect (which proves nothing was sent) brings sbx here. A start lock
// (an exclusively created file) makes sure two concurrent sbx processes never start
// two daemons; everyone else waits for the socket to answer.

import { spawn } from "node:child_process";
import fs from "node:fs";
import { checkLocalDaemonDirs } from "../config/paths.js";
import { Api } from "../client/api.js";
import type { Endpoint } from "../client/endpoint.js";
import { HttpClient } from "../client/http.js";
import { selfInvocation } from "../platform/self.js";
import type { Context } from "./context.js";
import { BackendError, type SbxError } from "../common/errors.js";
import { readStartFailure, startFailureError } from "./daemon-start-failure.js";

const START_DEADLINE_MS = 20_000;
const STALE_LOCK_MS = 30_000;
export const AUTO_IDLE_EXIT = "10m";

async function answers(api: Api): Promise<boolean> {
  try {
    await api.health(2_000);
    return true;
  } catch {
    return false;
  }
}

function tryLock(file: string): boolean {
  try {
    const fd = fs.openSync(file, "wx", 0o600);
    fs.writeSync(fd, `${process.pid}\n`);
    fs.closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    try {
      if (Date.now() - fs.statSync(file).mtimeMs > STALE_LOCK_MS) fs.rmSync(file, { force: true });
    } catch {
      // gone meanwhile
    }
    return false;
  }
}

/**
 * What of the CLI's environment the daemon gets: where its files are, the locale and
 * the PATH (to find bwrap), and SBX_WIRE_RECORD (the test tool that records its
 * exchanges: docs/protocol.md, "The OpenAPI document"). Never API keys, tokens or
 * anything else of the caller's: the daemon outlives the command that started it and
 * serves every later one.
 */
const DAEMON_ENVIRONMENT =
  /^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|LC_[A-Z]+|TZ|TMPDIR|SBX_HOME|SBX_WIRE_RECORD|XDG_CONFIG_HOME|XDG_STATE_HOME|XDG_RUNTIME_DIR)$/;

export function daemonEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && DAEMON_ENVIRONMENT.test(name)) out[name] = value;
  }
  return out;
}

/** Spawns `sbx daemon run` detached, its output appended to daemon.log, with a scrubbed environment. */
export function spawnDaemon(ctx: Context, extraArgs: string[]): number | undefined {
  const { paths } = ctx;
  ctx.ensurePrivateDir(paths.daemonDir, paths.stateDir);
  const log = fs.openSync(paths.daemonLog, "a", 0o600);
  const self = selfInvocation();
  const child = spawn(self.command, [...self.args, "daemon", "run", ...extraArgs], {
    detached: true,
    stdio: ["ignore", log, log],
    env: daemonEnvironment(ctx.env),
    cwd: paths.daemonDir,
  });
  fs.closeSync(log);
  child.unref();
  return child.pid;
}

/** A daemon that refuses to start (a damaged backend.db: 74) says why at once: its refusal, once recorded. */
export function refusalOf(ctx: Context, pid: number | undefined): () => SbxError | null {
  return () => {
    const failure = pid === undefined ? null : readStartFailure(ctx.paths, pid);
    return failure === null ? null : startFailureError(failure);
  };
}

/**
 * Waits for the daemon to answer, up to `deadlineMs`; `refused` (checked between tries)
 * ends the wait with the error of a daemon that refused to start.
 */
export async function waitForDaemon(
  api: Api,
  deadlineMs: number,
  refused: () => SbxError | null = () => null,
): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (await answers(api)) return true;
    const failure = refused();
    if (failure) throw failure;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** Starts the local daemon unless it answers (another sbx may have just started it). */
export async function ensureLocalDaemon(ctx: Context, endpoint: Endpoint): Promise<void> {
  // Whoever could write these directories could be the one answering on the socket.
  checkLocalDaemonDirs(ctx.paths);
  // A client of its own: its health probes must not come back here.
  const http = new HttpClient(endpoint, ctx.interrupt);
  try {
    await startUnlessAnswering(ctx, new Api(http));
  } finally {
    await http.close();
  }
}

async function startUnlessAnswering(ctx: Context, api: Api): Promise<void> {
  if (await answers(api)) return;
  ctx.ensurePrivateDir(ctx.paths.daemonDir, ctx.paths.stateDir);
  const until = Date.now() + START_DEADLINE_MS;
  while (Date.now() < until) {
    if (tryLock(ctx.paths.startLock)) {
      // A spinner on a terminal; piped, the one line says why the first command is slower.
      const progress = ctx.io.progress("starting the local backend (sbx daemon)…");
      try {
        if (await answers(api)) return;
        if (!ctx.io.animated) ctx.io.info("sbx: starting the local backend (sbx daemon)…");
        const pid = spawnDaemon(ctx, ["--idle-exit", AUTO_IDLE_EXIT]);
        if (await waitForDaemon(api, until - Date.now(), refusalOf(ctx, pid))) return;
      } finally {
        progress.stop();
        fs.rmSync(ctx.paths.startLock, { force: true });
      }
      break;
    }
    if (await waitForDaemon(api, 500)) return;
  }
  throw new BackendError("daemon_unavailable", "the local backend did not start", null, `see ${ctx.paths.daemonLog}`);
}
