// Every exit code sbx gives, named once (docs/classification.md). A code from 1 to
// 123 is only ever the command's own exit code; sbx's own failures borrow none of
// them: the sysexits codes 70, 74, 75 and 78, and 125, 130, 141, 200, 201 and 255. A lookup that
// matches nothing, a refusal and a failed read are sbx's own failures too
// (test/cli/exit-walk.test.ts walks every verb of the command tree to hold this).

export const ExitCodes = {
  ok: 0,
  /**
   * `sbx jobs wait` and `jobs submit --wait`: a job ran and did not succeed (failed,
   * cancelled, timed out, a dependency failed); `sbx jobs run`: failed with no exit
   * code of its own. Never anything else: what sbx itself fails at has its own code.
   */
  jobFailed: 1,
  /** EX_SOFTWARE: a bug in sbx. */
  internal: 70,
  /** EX_IOERR: the receipt store (or a directory sbx writes) is unusable; nothing was sent. */
  storeUnusable: 74,
  /**
   * EX_TEMPFAIL: nothing ran, nothing was sent or the backend said not_started; safe to
   * send again. Also a read that failed (nothing changed; safe to read again), and
   * `sbx daemon status` when the daemon is not running.
   */
  notStarted: 75,
  /** EX_CONFIG: a configuration file that does not parse or validate. */
  config: 78,
  /** The backend killed the command at its timeout. */
  timedOut: 124,
  /**
   * Refused before anything ran: usage, configuration, validation, a name or id that
   * matches nothing (or, as a prefix, more than one), a 4xx answer.
   */
  usage: 125,
  /**
   * `sbx exec --stream`: sbx's stdout lost its reader (`| head -1`), so sbx stopped
   * following and left the command running: 128 + SIGPIPE (13), as a shell reports a
   * process killed by SIGPIPE.
   */
  stdoutClosed: 141,
  /** Cancelled (also: interrupted before anything was sent). */
  cancelled: 130,
  /**
   * `sbx receipts verify`: the record is not intact (an entry changed, deleted, moved or
   * inserted; a bundle whose signature or content does not verify). Above every signal
   * (128+N, N ≤ 64), so no command's exit and no kill can be mistaken for it.
   */
  notIntact: 200,
  /**
   * `sbx exec --fail-on-truncated`: the command succeeded, but what sbx printed of its
   * output is not all of it (past the backend's output cap). Above every signal too.
   */
  outputIncomplete: 201,
  /** In doubt: it may have run (or a change, such as a stop or a cancel, may have been made). */
  inDoubt: 255,
} as const;

/** A command killed by signal number N exits 128 + N, as a shell reports it. */
export function signalExitCode(signalNumber: number): number {
  return 128 + signalNumber;
}
