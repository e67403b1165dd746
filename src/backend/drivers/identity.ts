// Who a sandbox's commands are on the host (docs/drivers.md, "Identity").
//
// When the backend runs as root, each sandbox gets a host uid and gid of its own from
// a reserved range, chosen when the sandbox is created and kept with it: its
// commands run as that uid (bwrap is started as it, so the user namespace maps to it,
// never to the host's root), its workspace and every file a command makes there
// belong to it, and what the backend writes into the workspace is given to it. Two
// sandboxes never share a uid (within one data directory): a command that got out of
// its sandbox would still be an unprivileged user without access to another's files.
// When the backend is an ordinary user, commands run as that user, as before.

import { randomInt } from "node:crypto";

/**
 * The reserved range: 2,000,000,000 … 2,099,999,999, inside the span systemd leaves
 * unused (0x70000000–0x7FFDFFFF: above container ranges, below its foreign-uid range
 * and the signed 32-bit boundary). Files made by a sandbox show with these numbers on
 * the host (`ls -ln`), owned by no named user.
 */
export const SANDBOX_UID_FIRST = 2_000_000_000;
export const SANDBOX_UID_COUNT = 100_000_000;

/** The uid and gid commands see themselves as inside when the backend is root: nobody. */
export const INSIDE_ID = 65534;

/** A host uid and gid to run a sandbox's commands as. */
export interface HostIdentity {
  uid: number;
  gid: number;
}

export function isSandboxUid(uid: number): boolean {
  return Number.isInteger(uid) && uid >= SANDBOX_UID_FIRST && uid < SANDBOX_UID_FIRST + SANDBOX_UID_COUNT;
}

/**
 * A uid for a new sandbox, not in `taken`: random in the range, so that the sandboxes
 * of two data directories on one machine are unlikely to share one either.
 */
export function pickSandboxUid(taken: ReadonlySet<number>, random: (n: number) => number = randomInt): number {
  for (let i = 0; i < 64; i++) {
    const uid = SANDBOX_UID_FIRST + random(SANDBOX_UID_COUNT);
    if (!taken.has(uid)) return uid;
  }
  // Practically unreachable (64 collisions in a row): the first free one.
  for (let uid = SANDBOX_UID_FIRST; uid < SANDBOX_UID_FIRST + SANDBOX_UID_COUNT; uid++) {
    if (!taken.has(uid)) return uid;
  }
  throw new Error("no sandbox uid is free");
}

/** The identity a sandbox's commands run as on the host: its own when the backend is root, else none (the backend's). */
export function hostIdentityOf(sandboxUid: number | null, backendIsRoot: boolean): HostIdentity | null {
  if (!backendIsRoot || sandboxUid === null) return null;
  return { uid: sandboxUid, gid: sandboxUid };
}
