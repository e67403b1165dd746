// Typed errors with a stable code and an exit code (undici's habit: every error class
// carries a string `code`). Every layer throws them; src/cli/main.ts is the one place
// that turns one into a process exit (error-report.ts says how), and the codes are
// named in exit-codes.ts (docs/classification.md).

import { ExitCodes } from "./exit-codes.js";

export class SbxError extends Error {
  readonly code: string;
  readonly exitCode: number;
  /** A next step for the person, printed after the message. */
  readonly hint: string | undefined;

  /** The exit code is always chosen (src/common/exit-codes.ts): never a command's 1-123 by default. */
  constructor(code: string, message: string, opts: { exitCode: number; hint?: string; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "SbxError";
    this.code = code;
    this.exitCode = opts.exitCode;
    this.hint = opts.hint;
  }
}

/** Bad input found before anything was dispatched: exit 125. */
export class UsageError extends SbxError {
  constructor(message: string, hint?: string) {
    super("usage", message, { exitCode: ExitCodes.usage, ...(hint === undefined ? {} : { hint }) });
    this.name = "UsageError";
  }
}

/** Configuration problems (profiles, keys, URLs): exit 125 as well, nothing dispatched. */
export class ConfigError extends SbxError {
  constructor(message: string, hint?: string) {
    super("config", message, { exitCode: ExitCodes.usage, ...(hint === undefined ? {} : { hint }) });
    this.name = "ConfigError";
  }
}

/** A configuration file that cannot be read, parsed or validated: exit 78, nothing dispatched. */
export class ConfigFileError extends SbxError {
  constructor(message: string, hint?: string) {
    super("config_file", message, { exitCode: ExitCodes.config, ...(hint === undefined ? {} : { hint }) });
    this.name = "ConfigFileError";
  }
}

/** Something named does not exist (a receipt, a sandbox, a profile): refused, exit 125. */
export class NotFoundError extends SbxError {
  constructor(message: string, hint?: string, code = "not_found") {
    super(code, message, { exitCode: ExitCodes.usage, ...(hint === undefined ? {} : { hint }) });
    this.name = "NotFoundError";
  }
}

/**
 * A prefix that matches more than one id: refused (125), naming a few of them.
 * `noun` is what they are ("receipts", "jobs").
 */
export class AmbiguousIdError extends SbxError {
  constructor(
    readonly ref: string,
    noun: string,
    /** A few of the ids it matches (the newest first where that is known). */
    readonly candidates: readonly string[],
    /** How many it matches in all. */
    readonly total: number = candidates.length,
    code = "ambiguous_id",
  ) {
    const shown = candidates.slice(0, 5);
    super(
      code,
      `${JSON.stringify(ref)} matches ${total} ${noun}: ${shown.join(", ")}${total > shown.length ? ", …" : ""}`,
      { exitCode: ExitCodes.usage, hint: "give more characters of the id" },
    );
    this.name = "AmbiguousIdError";
  }
}

/** The exit code of a backend answer that is not a success, for a read or a change. */
export function exitCodeOfAnswer(status: number | null, mutation: boolean): number {
  // Nothing was sent, or it provably never left: safe to send again.
  if (status === null) return ExitCodes.notStarted;
  // Refused: nothing was done (408 and 429 only say "not now").
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return ExitCodes.usage;
  // Not started, by the backend's own word: nothing was done.
  if (status === 503 || status === 408 || status === 429) return ExitCodes.notStarted;
  // A change answered with a server error, or with an answer sbx cannot read: it may have been made.
  // A read changes nothing: reading again is safe.
  return mutation ? ExitCodes.inDoubt : ExitCodes.notStarted;
}

/**
 * The backend could not be reached, or answered a read/admin call with an error.
 * Exit 75 when the request provably never left or a read failed (safe to repeat),
 * 125 for a refusal (4xx), 255 when a change may have been acted on
 * (exitCodeOfAnswer).
 */
export class BackendError extends SbxError {
  readonly status: number | null;
  constructor(
    code: string,
    message: string,
    status: number | null,
    hint?: string,
    exitCode: number = exitCodeOfAnswer(status, false),
  ) {
    super(code, message, { exitCode, ...(hint === undefined ? {} : { hint }) });
    this.name = "BackendError";
    this.status = status;
  }
}

/**
 * sbx's own state on this machine (the receipt store, the directories it keeps it
 * in) cannot be used. Met before a request is sent, so it is told with "nothing was
 * sent" (after sending, the answer is kept in memory instead: src/cli/dispatch.ts).
 */
export class LocalStateError extends SbxError {
  constructor(code: string, message: string, exitCode: number, hint: string) {
    super(code, message, { exitCode, hint });
    this.name = "LocalStateError";
  }
}

/** Carries a chosen exit code out of a command that already printed its result. */
export class ExitWith extends Error {
  readonly exitCode: number;
  constructor(exitCode: number) {
    super(`exit ${exitCode}`);
    this.exitCode = exitCode;
  }
}
