// Admission, the same for executions, supervised processes and jobs: a run is known
// (its row committed) before anything of it starts, and when that cannot be stored —
// the backend shuts down, or its storage refuses the write (a full disk, an I/O
// error, a read-only file) — nothing was stored and nothing started: the request is
// refused as not_started (503, safe to send again; docs/protocol.md).

import { notStarted, Refusal } from "../refusal.js";

/** Whether an error is the backend's storage refusing a write (SQLite or the file system). */
export function isStorageFailure(err: unknown): boolean {
  const code = String((err as { code?: unknown })?.code ?? "");
  return /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/.test(code) || code === "ENOSPC" || code === "EDQUOT";
}

/**
 * What an admission that failed to store its work throws: a storage failure is
 * not_started (storage_unavailable), anything else passes as it is.
 */
export function admissionFailure(err: unknown, what: string): unknown {
  if (err instanceof Refusal || !isStorageFailure(err)) return err;
  return notStarted(
    "storage_unavailable",
    `the backend could not store the ${what} (${(err as Error).message}); nothing was started`,
  );
}

/** Stores an admission (`work`, in one transaction); a failure to store it starts nothing (admissionFailure). */
export function storeAdmission<T>(store: { transaction<R>(fn: () => R): R }, what: string, work: () => T): T {
  try {
    return store.transaction(work);
  } catch (err) {
    throw admissionFailure(err, what);
  }
}
