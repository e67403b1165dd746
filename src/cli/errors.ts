// Typed errors with a stable code and an exit code. src/cli/main.ts is the one
// place that turns them into a process exit.

export const ExitCodes = {
  ok: 0,
  /** the server killed it at its timeout */
  timedOut: 124,
  /** refused before anything ran: usage, configuration, validation */
  usage: 125,
  cancelled: 130,
  /** nothing ran; safe to send again */
  notStarted: 75,
  /** in doubt: it may have run */
  inDoubt: 255,
} as const;

export class SbxError extends Error {
  readonly code: string;
  readonly exitCode: number;
  /** A next step for the person, printed after the message. */
  readonly hint: string | undefined;

  constructor(code: string, message: string, opts: { exitCode?: number; hint?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "SbxError";
    this.code = code;
    this.exitCode = opts.exitCode ?? 1;
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

/** Configuration problems (profiles, keys, files): exit 125 as well, nothing dispatched. */
export class ConfigError extends SbxError {
  constructor(message: string, hint?: string) {
    super("config", message, { exitCode: ExitCodes.usage, ...(hint === undefined ? {} : { hint }) });
    this.name = "ConfigError";
  }
}

/** Something named does not exist (a receipt, a sandbox, a profile). */
export class NotFoundError extends SbxError {
  constructor(message: string, hint?: string) {
    super("not_found", message, { exitCode: 1, ...(hint === undefined ? {} : { hint }) });
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
    exitCode: number = status === null ? ExitCodes.notStarted : 1,
  ) {
    super(code, message, { exitCode, ...(hint === undefined ? {} : { hint }) });
    this.name = "BackendError";
    this.status = status;
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
