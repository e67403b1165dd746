// Connections a Unix-socket server holds open, as the kernel lists them in
// /proc/net/unix: an accepted connection carries the path its listener was bound to
// (state 03, connected). The backend binds a temporary name in the socket's directory
// and renames it into place, so the listener is found by that directory. Waiting for
// none proves every client's pooled keep-alive connection is closed.

import fs from "node:fs";
import path from "node:path";

const ACCEPTING = "00010000";
const CONNECTED = "03";

/** Accepted connections on the server socket at socketPath (this network namespace). */
export function connectionsTo(socketPath: string): number {
  const entries = fs
    .readFileSync("/proc/net/unix", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[7] !== undefined && path.dirname(f[7]) === path.dirname(socketPath));
  const listeners = new Set(entries.filter((f) => f[3] === ACCEPTING).map((f) => f[7]));
  return entries.filter((f) => f[5] === CONNECTED && listeners.has(f[7])).length;
}
