// Errors of naming a receipt, and of the receipt store itself: SbxErrors with their
// exit codes (docs/classification.md). Apart from the store so that the CLI can
// recognise them without loading the store and its SQLite driver at start-up.

import fs from "node:fs";
import { AmbiguousIdError, NotFoundError, LocalStateError } from "../common/errors.js";
import { ExitCodes } from "../common/exit-codes.js";

export class ReceiptNotFound extends NotFoundError {
  constructor(readonly ref: string) {
    super(`no receipt matches ${JSON.stringify(ref)}`, "see `sbx receipts list`", "receipt_not_found");
    this.name = "ReceiptNotFound";
  }
}

export class AmbiguousReceipt extends AmbiguousIdError {
  constructor(
    ref: string,
    /** The newest of the receipts it matches (a few are named). */
    candidates: string[],
    /** How many receipts it matches in all. */
    total: number = candidates.length,
  ) {
    super(ref, "receipts", candidates, total, "ambiguous_receipt");
    this.name = "AmbiguousReceipt";
  }
}

/** Another process holds the receipt store's write lock (SQLITE_BUSY): worth waiting for; exit 75. */
export class ReceiptStoreBusy extends LocalStateError {
  constructor(
    readonly file: string,
    /** How long sbx waited, when it gave up. */
    readonly waitedMs = 0,
  ) {
    super(
      "store_busy",
      waitedMs > 0
        ? `the receipt store ${file} stayed busy for ${Math.round(waitedMs / 1000)}s (another process holds it)`
        : `the receipt store ${file} is busy (another process holds it)`,
      ExitCodes.notStarted,
      "try again once it is free; SBX_STORE_WAIT sets how long sbx waits (default 2m)",
    );
    this.name = "ReceiptStoreBusy";
  }
}

/** The receipt store cannot be used: disk full, corrupt, unreadable, newer than this sbx; exit 74. */
export class ReceiptStoreUnusable extends LocalStateError {
  constructor(
    readonly file: string,
    /** What is wrong, for a person: "the disk is full". */
    readonly reason: string,
    /** The failure's own code: SQLITE_FULL, ENOSPC, …; null when there is none. */
    readonly systemCode: string | null,
    /** What to do about it. */
    hint: string,
  ) {
    super(
      "store_unusable",
      `the receipt store ${file} is unusable: ${reason}${systemCode ? ` (${systemCode})` : ""}`,
      ExitCodes.storeUnusable,
      hint,
    );
    this.name = "ReceiptStoreUnusable";
  }
}

const BUSY = /^SQLITE_(BUSY|LOCKED)/;

function diskFull(dir: string): boolean {
  try {
    return fs.statfsSync(dir).bavail === 0;
  } catch {
    return false;
  }
}

/** What a SQLite or file-system error code means for the store, or null when it is not the store's fault. */
function unusableReason(code: string, file: string): { reason: string; hint: string } | null {
  const dir = file.slice(0, Math.max(1, file.lastIndexOf("/")));
  const aside = `move it aside to start a new store (mv ${file} ${file}.broken); \`sbx receipts\` then starts empty`;
  if (code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT") {
    return { reason: "the disk is full", hint: `free some space where ${dir} lives` };
  }
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") {
    return { reason: "the file is corrupt (not a SQLite database sbx can read)", hint: aside };
  }
  if (code.startsWith("SQLITE_READONLY") || code === "EROFS") {
    return { reason: "it cannot be written (read-only)", hint: `make ${file} and ${dir} writable by you` };
  }
  if (code.startsWith("SQLITE_CANTOPEN") || code === "SQLITE_PERM" || code === "EACCES" || code === "EPERM") {
    return {
      reason: "it cannot be opened (permissions)",
      hint: `make ${file} and ${dir} readable and writable by you`,
    };
  }
  if (code.startsWith("SQLITE_IOERR") || code === "EIO") {
    // SQLite reports a full disk as an I/O error where it grows its shared-memory file.
    if (diskFull(dir)) return { reason: "the disk is full", hint: `free some space where ${dir} lives` };
    return { reason: "the disk reported an I/O error", hint: `check the disk holding ${dir}` };
  }
  if (code === "SBX_SCHEMA_NEWER") {
    return { reason: "it was written by a newer sbx", hint: "use that newer sbx, or set SBX_HOME elsewhere" };
  }
  if (code === "EISDIR" || code === "ENOTDIR") {
    return { reason: "the path is not a file", hint: `remove or rename what is at ${file}` };
  }
  return null;
}

/**
 * Turns an error from SQLite or the file system into a store error naming the file
 * (busy or unusable); anything else (a bug) is returned as it was.
 */
export function storeFailure(err: unknown, file: string): unknown {
  if (err instanceof ReceiptStoreBusy || err instanceof ReceiptStoreUnusable) return err;
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== "string") return err;
  if (BUSY.test(code)) return new ReceiptStoreBusy(file);
  const what = unusableReason(code, file);
  return what === null ? err : new ReceiptStoreUnusable(file, what.reason, code, what.hint);
}
