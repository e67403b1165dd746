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

  constructor(code: string, message: string, opts: { exitCode?: number; hint?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "SbxError";
    this.code = code;
    this.exitCode = opts.exitCode ?? ExitCodes.failure;
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

/** Something named does not exist (a receipt, a sandbox, a profile). */
export class NotFoundError extends SbxError {
  constructor(message: string, hint?: string, code = "not_found") {
    super(code, message, { exitCode: ExitCodes.failure, ...(hint === undefined ? {} : { hint }) });
    this.name = "NotFoundError";
  }
}

/**
 * The backend could not be reached, or answered a read/admin call with an error.
 * Exit 75 only when the request provably never left (safe to send again), 255 when
 * it may have been acted on, 1 for an error answer.
 */
export class BackendError extends SbxError {
  readonly status: number | null;
  constructor(
    code: string,
    message: string,
    status: number | null,
    hint?: string,
    exitCode: number = status === null ? ExitCodes.notStarted : ExitCodes.failure,
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
