// Pausing a sandbox (docs/operations.md, "Pause and resume"): the cgroup freezer stops
// every process of the sandbox's cgroup where it stands — no CPU, no signal handled —
// until it is thawed. cgroup v1 has a `freezer` controller (freezer.state: THAWED,
// FREEZING, FROZEN); cgroup v2 has cgroup.freeze in every non-root cgroup (1 or 0,
// and "frozen 1" in cgroup.events once every process stopped). The sandbox's processes
// are in that cgroup from its start (cgroups.ts: its leader joins it with the limits').
// Freezing is not instant: the kernel stops each task at its next return to user space,
// so a freeze is waited for until the cgroup says frozen.
//
// v1's frozen tasks do not even die of SIGKILL until thawed: whatever ends a sandbox
// (stop, rm, the daemon's shutdown, recovery) thaws it first (cgroups.ts, remove()).

import fs from "node:fs";
import path from "node:path";
import type { CgroupVersion } from "./spec.js";

/** How long a freeze may take before it is given up (and the sandbox thawed again). */
const FREEZE_WAIT_MS = 10_000;
const FREEZE_PAUSE_MS = 10;

/** Whether the cgroup at `dir` is frozen or freezing (false when it has no freezer file: not made yet). */
export function isFrozen(dir: string, version: CgroupVersion): boolean {
  const text = read(path.join(dir, version === 1 ? "freezer.state" : "cgroup.freeze"));
  if (text === null) return false;
  return version === 1 ? text !== "THAWED" : text === "1";
}

/** Whether every process of the cgroup has stopped (v1 FROZEN; v2 cgroup.events says frozen 1). */
function settled(dir: string, version: CgroupVersion): boolean {
  if (version === 1) return read(path.join(dir, "freezer.state")) === "FROZEN";
  return /^frozen 1$/m.test(read(path.join(dir, "cgroup.events")) ?? "");
}

/**
 * Freezes the cgroup and waits until every process in it stopped. Throws saying why
 * when it cannot be written, or did not settle (then it is thawed again: never left
 * half-frozen).
 */
export async function freeze(dir: string, version: CgroupVersion): Promise<void> {
  write(dir, version, true);
  const deadline = Date.now() + FREEZE_WAIT_MS;
  while (!settled(dir, version)) {
    if (Date.now() > deadline) {
      write(dir, version, false);
      throw new Error(`its processes did not all stop within ${FREEZE_WAIT_MS / 1000} s; it was thawed again`);
    }
    await new Promise((resolve) => setTimeout(resolve, FREEZE_PAUSE_MS));
  }
}

/** Thaws the cgroup (its processes go on where they stopped); nothing when it has no freezer file. */
export function thaw(dir: string, version: CgroupVersion): void {
  if (!fs.existsSync(path.join(dir, version === 1 ? "freezer.state" : "cgroup.freeze"))) return;
  write(dir, version, false);
}

function write(dir: string, version: CgroupVersion, frozen: boolean): void {
  const file = path.join(dir, version === 1 ? "freezer.state" : "cgroup.freeze");
  const value = version === 1 ? (frozen ? "FROZEN" : "THAWED") : frozen ? "1" : "0";
  try {
    fs.writeFileSync(file, value);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new Error(`cannot write ${path.basename(file)} of the sandbox's cgroup: ${e.code ?? e.message}`);
  }
}

function read(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
}
