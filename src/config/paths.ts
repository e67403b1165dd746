// Where sbx keeps things. SBX_HOME, when set, holds everything; otherwise config
// lives under XDG_CONFIG_HOME and state under XDG_STATE_HOME.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LocalStateError } from "../common/errors.js";
import { ExitCodes } from "../common/exit-codes.js";
import { fileErrorWords } from "../common/file-errors.js";
import { sha256Hex } from "../platform/sha256.js";

export interface SbxPaths {
  configDir: string;
  stateDir: string;
  configFile: string;
  credentialsFile: string;
  receiptsDb: string;
  /** The receipt store's Ed25519 signing key (bundles; src/receipts/signing-key.ts). */
  receiptsKey: string;
  daemonDir: string;
  socketPath: string;
  pidFile: string;
  daemonLog: string;
  startLock: string;
}

// sun_path is 108 bytes on Linux; keep a margin.
const SOCKET_PATH_MAX = 100;

/**
 * Where sbx keeps things, with every symlink in those paths resolved once, here:
 * the daemon, bwrap and the receipts then all use the same real directories (a
 * symlink anywhere in SBX_HOME's path used to make every sandboxed command fail).
 * Throws UnsafeDirectory (74) for a symlink on the way owned by another user.
 */
export function resolvePaths(env: NodeJS.ProcessEnv = process.env): SbxPaths {
  const home = env.SBX_HOME?.trim() ? resolveOwnPath(path.resolve(env.SBX_HOME)) : null;
  const userHome = env.HOME ?? os.homedir();
  const configDir = home ?? resolveOwnPath(path.resolve(env.XDG_CONFIG_HOME || path.join(userHome, ".config"), "sbx"));
  const stateDir =
    home ?? resolveOwnPath(path.resolve(env.XDG_STATE_HOME || path.join(userHome, ".local", "state"), "sbx"));
  const daemonDir = path.join(stateDir, "daemon");
  let socketPath = path.join(daemonDir, "daemon.sock");
  if (Buffer.byteLength(socketPath) > SOCKET_PATH_MAX) {
    // A deep SBX_HOME cannot hold a socket; use a short private directory named after it.
    const tag = sha256Hex(daemonDir).slice(0, 16);
    socketPath = path.join(os.tmpdir(), `sbx-${process.getuid?.() ?? 0}-${tag}`, "daemon.sock");
  }
  return {
    configDir,
    stateDir,
    configFile: path.join(configDir, "config.json"),
    credentialsFile: path.join(configDir, "credentials.json"),
    receiptsDb: path.join(stateDir, "receipts.db"),
    receiptsKey: path.join(stateDir, "receipts-key.pem"),
    daemonDir,
    socketPath,
    pidFile: path.join(daemonDir, "daemon.pid"),
    daemonLog: path.join(daemonDir, "daemon.log"),
    startLock: path.join(daemonDir, "start.lock"),
  };
}

/**
 * A directory sbx would use that another user could tamper with: whoever can write
 * to it can replace what sbx keeps there (the daemon's socket, receipts, config) and
 * receive every command or forge every answer.
 */
export class UnsafeDirectory extends LocalStateError {
  constructor(
    readonly dir: string,
    readonly reason: string,
    hint: string,
  ) {
    super("unsafe_directory", `refusing to use ${dir}: ${reason}`, ExitCodes.storeUnusable, hint);
    this.name = "UnsafeDirectory";
  }
}

/** Symlinks followed while resolving one path, at most (as the kernel's ELOOP). */
const MAX_SYMLINKS = 40;

/**
 * An absolute path with its symlinks resolved, as far as it exists (the rest, made
 * later, is appended as it is). A symlink on the way that belongs to another user
 * (not this one, not root) is refused: whoever owns it chooses where sbx's state goes.
 */
export function resolveOwnPath(absolute: string): string {
  const uid = process.getuid?.();
  let done = "/";
  let todo = absolute.split("/").filter((s) => s !== "" && s !== ".");
  let hops = 0;
  while (todo.length > 0) {
    const s = todo.shift()!;
    if (s === "..") {
      done = path.dirname(done);
      continue;
    }
    const next = path.join(done, s);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(next);
    } catch {
      // Not there yet (sbx creates it, private): nothing more to resolve.
      return path.join(next, ...todo);
    }
    if (!st.isSymbolicLink()) {
      done = next;
      continue;
    }
    if (uid !== undefined && st.uid !== uid && st.uid !== 0) {
      throw new UnsafeDirectory(
        next,
        `it is a symlink owned by uid ${st.uid}, not by you (uid ${uid}) or root`,
        "use a directory of your own, e.g. SBX_HOME=$HOME/.sbx",
      );
    }
    if (++hops > MAX_SYMLINKS)
      throw new UnsafeDirectory(absolute, "it has too many levels of symlinks", "check the path");
    const target = fs.readlinkSync(next);
    if (target.startsWith("/")) done = "/";
    todo = [...target.split("/").filter((t) => t !== "" && t !== "."), ...todo];
  }
  return done;
}

/** Refuses a directory (symlinks followed) that is not the user's own or that group or others may write. */
export function checkPrivateDir(dir: string): void {
  const uid = process.getuid?.();
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch (err) {
    throw new UnsafeDirectory(dir, `it cannot be read (${fileErrorWords(err)})`, "check the path");
  }
  if (!st.isDirectory())
    throw new UnsafeDirectory(dir, "it is not a directory", "remove it, or set SBX_HOME elsewhere");
  if (uid === undefined) return;
  if (st.uid !== uid) {
    throw new UnsafeDirectory(
      dir,
      `it belongs to uid ${st.uid}, not to you (uid ${uid})`,
      "use a directory of your own, e.g. SBX_HOME=$HOME/.sbx",
    );
  }
  if ((st.mode & 0o022) !== 0) {
    throw new UnsafeDirectory(
      dir,
      `group or others may write to it (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")})`,
      `make it private: chmod 700 ${dir}`,
    );
  }
}

/**
 * Creates a directory private to its user (0700), including parents, and refuses it
 * (and every directory from `within` down to it) when another user could tamper with it.
 * Returns the first directory it created (the highest), or undefined when `dir` existed.
 */
export function ensurePrivateDir(dir: string, within?: string): string | undefined {
  const created = fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const chain = [dir];
  if (within !== undefined && dir !== within && dir.startsWith(`${within}${path.sep}`)) {
    for (let d = path.dirname(dir); d.length >= within.length; d = path.dirname(d)) {
      chain.unshift(d);
      if (d === within) break;
    }
  }
  for (const d of chain) checkPrivateDir(d);
  return created;
}

/** Whether `created` (what ensurePrivateDir made) is `home` or a directory above it: the home is new. */
export function madeHome(created: string | undefined, home: string): boolean {
  return created !== undefined && (created === home || home.startsWith(`${created}${path.sep}`));
}

/**
 * Before talking to the local daemon's socket: its directory (and the state directory
 * above it) must be private, or someone else's socket could be answering.
 */
export function checkLocalDaemonDirs(paths: SbxPaths): void {
  for (const dir of [paths.stateDir, paths.daemonDir, path.dirname(paths.socketPath)]) {
    if (fs.existsSync(dir)) checkPrivateDir(dir);
  }
}
