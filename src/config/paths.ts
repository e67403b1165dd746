// Where sbx keeps things. SBX_HOME, when set, holds everything; otherwise config
// lives under XDG_CONFIG_HOME and state under XDG_STATE_HOME.

import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface SbxPaths {
  configDir: string;
  stateDir: string;
  configFile: string;
  credentialsFile: string;
  receiptsDb: string;
  daemonDir: string;
  socketPath: string;
  pidFile: string;
  daemonLog: string;
  startLock: string;
}

// sun_path is 108 bytes on Linux; keep a margin.
const SOCKET_PATH_MAX = 100;

export function resolvePaths(env: NodeJS.ProcessEnv = process.env): SbxPaths {
  const home = env.SBX_HOME?.trim() ? path.resolve(env.SBX_HOME) : null;
  const userHome = env.HOME ?? os.homedir();
  const configDir = home ?? path.join(env.XDG_CONFIG_HOME || path.join(userHome, ".config"), "sbx");
  const stateDir = home ?? path.join(env.XDG_STATE_HOME || path.join(userHome, ".local", "state"), "sbx");
  const daemonDir = path.join(stateDir, "daemon");
  let socketPath = path.join(daemonDir, "daemon.sock");
  if (Buffer.byteLength(socketPath) > SOCKET_PATH_MAX) {
    // A deep SBX_HOME cannot hold a socket; use a short private directory named after it.
    const tag = createHash("sha256").update(daemonDir).digest("hex").slice(0, 16);
    socketPath = path.join(os.tmpdir(), `sbx-${process.getuid?.() ?? 0}-${tag}`, "daemon.sock");
  }
  return {
    configDir,
    stateDir,
    configFile: path.join(configDir, "config.json"),
    credentialsFile: path.join(configDir, "credentials.json"),
    receiptsDb: path.join(stateDir, "receipts.db"),
    daemonDir,
    socketPath,
    pidFile: path.join(daemonDir, "daemon.pid"),
    daemonLog: path.join(daemonDir, "daemon.log"),
    startLock: path.join(daemonDir, "start.lock"),
  };
}

/** Creates a directory private to its user (0700), including parents. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}
