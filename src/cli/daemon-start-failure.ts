// Why the local daemon last failed to start, kept beside its pid file: the sbx that
// spawned it (its output goes to daemon.log) says so at once with the daemon's own exit
// code (74 for a damaged backend.db: nothing ran) instead of waiting out its start
// deadline, and `sbx daemon status` says why it is not running.

import fs from "node:fs";
import path from "node:path";
import type { SbxPaths } from "../config/paths.js";
import { SbxError } from "../common/errors.js";

export interface StartFailure {
  code: string;
  message: string;
  hint: string | null;
  /** The exit code the daemon exited with. */
  exit: number;
  pid: number;
  at: string;
}

const fileOf = (paths: SbxPaths) => path.join(paths.daemonDir, "start-failure.json");

/** Written by a daemon whose start was refused (best effort: the refusal itself is what matters). */
export function recordStartFailure(paths: SbxPaths, err: SbxError): void {
  const failure: StartFailure = {
    code: err.code,
    message: err.message,
    hint: err.hint ?? null,
    exit: err.exitCode,
    pid: process.pid,
    at: new Date().toISOString(),
  };
  try {
    fs.writeFileSync(fileOf(paths), `${JSON.stringify(failure)}\n`, { mode: 0o600 });
  } catch {
    // daemon.log has it too
  }
}

/** A daemon starting clears what an earlier one recorded. */
export function clearStartFailure(paths: SbxPaths): void {
  fs.rmSync(fileOf(paths), { force: true });
}

/** The last recorded start failure (of the daemon with `pid`, when given), or null. */
export function readStartFailure(paths: SbxPaths, pid?: number): StartFailure | null {
  let doc: Partial<StartFailure>;
  try {
    doc = JSON.parse(fs.readFileSync(fileOf(paths), "utf8")) as Partial<StartFailure>;
  } catch {
    return null;
  }
  if (typeof doc.code !== "string" || typeof doc.message !== "string" || typeof doc.exit !== "number") return null;
  if (pid !== undefined && doc.pid !== pid) return null;
  return {
    code: doc.code,
    message: doc.message,
    hint: typeof doc.hint === "string" ? doc.hint : null,
    exit: doc.exit,
    pid: typeof doc.pid === "number" ? doc.pid : 0,
    at: typeof doc.at === "string" ? doc.at : "",
  };
}

/** Failures another starter's race explains (it serves, or is about to): keep waiting for the socket. */
const RACES = new Set(["daemon_already_running", "socket_in_use"]);

/** The error a spawning sbx gives for its daemon's refusal, or null when it should keep waiting. */
export function startFailureError(f: StartFailure): SbxError | null {
  if (RACES.has(f.code)) return null;
  return new SbxError(f.code, `the local backend refused to start: ${f.message}`, {
    exitCode: f.exit,
    ...(f.hint === null ? {} : { hint: f.hint }),
  });
}
