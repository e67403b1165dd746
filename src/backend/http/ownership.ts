// What a backend owns for its whole life, taken before it opens backend.db: its data
// directory (an exclusive lock inside it, which the kernel releases when the process
// dies) and its Unix socket (bound 0600 in a private directory, replacing only a dead
// one). Used by the server when it starts and by the daemon to tell whether another
// backend holds them (docs/protocol.md, "Additions").

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { tryExclusiveLock } from "../../platform/sqlite.js";
import { DaemonStartError } from "../errors.js";

/** A Unix socket this backend bound, recognised by its file's device and inode. */
export interface OwnedSocket {
  server: http.Server;
  /** Removes the socket file if it is still the one bound here. */
  removeFile(): void;
  /** Stops listening and removes the file (a start that failed after binding). */
  release(): Promise<void>;
}

/** Binds a Unix socket born 0600 in a 0700 directory, replacing only a dead socket file. No request handler yet. */
export async function bindUnixSocket(socketPath: string): Promise<OwnedSocket> {
  const server = http.createServer();
  await listenOnUnixSocket(server, socketPath);
  const st = fs.lstatSync(socketPath);
  const removeFile = () => {
    try {
      const now = fs.lstatSync(socketPath);
      if (now.dev === st.dev && now.ino === st.ino) fs.rmSync(socketPath, { force: true });
    } catch {
      // Gone already.
    }
  };
  return {
    server,
    removeFile,
    release: async () => {
      await closeNetServer(server);
      removeFile();
    },
  };
}

/** Stops listening (connections still open are left to end). */
function closeNetServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}

/**
 * The data directory's lock: an exclusive lock on <dataDir>/daemon.lock, inside the
 * private data directory (nobody else can create, replace or hold it first), which
 * the kernel releases when its process dies, so it is never left stale.
 */
function dataDirLockFile(dataDir: string): string {
  return path.join(dataDir, "daemon.lock");
}

/** Takes the data directory's lock for this backend's life; throws daemon_already_running when another holds it. */
export function lockDataDir(dataDir: string): { release(): void } {
  const lock = tryExclusiveLock(dataDirLockFile(dataDir));
  if (lock === null) {
    throw new DaemonStartError("daemon_already_running", `another sbx backend is using the data directory ${dataDir}`);
  }
  return lock;
}

/** Whether a running backend holds the data directory (see lockDataDir); null when this cannot be told. */
export async function dataDirInUse(dataDir: string): Promise<boolean | null> {
  const file = dataDirLockFile(dataDir);
  if (!fs.existsSync(file)) return false;
  try {
    const lock = tryExclusiveLock(file);
    lock?.release();
    return lock === null;
  } catch {
    return null;
  }
}

/**
 * Listens on a Unix socket born 0600 in a 0700 directory, replacing only a dead socket
 * file. The socket is bound under a temporary name and linked into place: link()
 * fails if anything took the path meanwhile, and closing the server later unlinks
 * only the temporary name (Node unlinks the path it bound), never a file at
 * `socketPath` that is not ours.
 */
async function listenOnUnixSocket(server: http.Server, socketPath: string): Promise<void> {
  const dir = path.dirname(socketPath);
  preparePrivateDir(dir);
  await removeStaleSocket(socketPath);
  const temporary = path.join(dir, `.${randomBytes(4).toString("hex")}`);
  // A temporary name that may not fit a socket address (107 bytes on Linux): bind in place then.
  const fits = Buffer.byteLength(temporary) <= Math.max(Buffer.byteLength(socketPath), 100);
  const bindPath = fits ? temporary : socketPath;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // The bind happens inside listen(); the umask makes the socket 0600 from birth.
    const previous = process.umask(0o177);
    try {
      server.listen(bindPath, () => {
        server.off("error", reject);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
  fs.chmodSync(bindPath, 0o600);
  if (bindPath === socketPath) return;
  try {
    fs.linkSync(bindPath, socketPath);
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      throw new DaemonStartError("socket_in_use", `another process took ${socketPath} while this backend started`);
    }
    throw err;
  } finally {
    fs.rmSync(bindPath, { force: true });
  }
}

/**
 * A directory the backend keeps its socket or data in: tightened to 0700 when it is
 * ours (never a shared one such as /tmp or $HOME); refused when another user owns it
 * or others may replace what is in it (writable, without the sticky bit).
 */
export function preparePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  let st = fs.statSync(dir);
  const uid = process.getuid?.();
  const ours = uid === undefined || st.uid === uid;
  const shared = (st.mode & 0o1000) !== 0 || dir === os.homedir() || dir === "/";
  if ((st.mode & 0o077) !== 0 && ours && !shared) {
    fs.chmodSync(dir, 0o700);
    st = fs.statSync(dir);
  }
  if (!ours) {
    throw new DaemonStartError("unsafe_directory", `${dir} belongs to uid ${st.uid}, not to this user (uid ${uid})`);
  }
  if ((st.mode & 0o022) !== 0 && !shared) {
    throw new DaemonStartError("unsafe_directory", `others may write to ${dir}; it must be private`);
  }
}

async function removeStaleSocket(socketPath: string): Promise<void> {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(socketPath);
  } catch {
    return;
  }
  if (!st.isSocket()) {
    throw new DaemonStartError("socket_path_not_socket", `${socketPath} exists and is not a socket; not replacing it`);
  }
  if (await listenerAnswers({ socketPath })) {
    throw new DaemonStartError("socket_in_use", `another process is listening on ${socketPath}`);
  }
  // Remove the dead file only if it is still the one found dead (not a socket bound meanwhile).
  try {
    const now = fs.lstatSync(socketPath);
    if (now.dev === st.dev && now.ino === st.ino) fs.rmSync(socketPath, { force: true });
  } catch {
    // Gone already.
  }
}

/** Where a listener may be: a Unix socket's path, or a TCP address. */
export type ListenerAddress = { socketPath: string } | { host: string; port: number };

/** True when something accepts connections there (within `timeoutMs`). */
export function listenerAnswers(address: ListenerAddress, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const conn = "socketPath" in address ? net.connect(address.socketPath) : net.connect(address.port, address.host);
    const done = (answers: boolean) => {
      clearTimeout(timer);
      conn.destroy();
      resolve(answers);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    conn.once("connect", () => done(true));
    conn.once("error", () => done(false));
  });
}
