// Every wait of the CLI is bounded and says what it waits for (issue 30, item 4): how
// long each waits when no --timeout is given, and how many failing answers in a row end
// one instead of being waited through. The exits: docs/classification.md.

/** `sbx jobs wait` and `sbx jobs submit --wait` without --timeout (a job may run 1 h). */
export const JOBS_WAIT_DEFAULT_MS = 60 * 60_000;
/** `sbx receipts wait` without --timeout. */
export const RECEIPTS_WAIT_DEFAULT_MS = 15 * 60_000;
/**
 * 5xx answers (other than 503, which says "try again") in a row that end a wait: the
 * backend's answer is said, not read again for the rest of the bound (a backend whose
 * database is damaged answers 500 to every read).
 */
export const SERVER_ERRORS_IN_A_ROW = 3;

/** A failing answer that ends a wait when it comes SERVER_ERRORS_IN_A_ROW times. */
export function isServerFailure(httpStatus: number | null): boolean {
  return httpStatus !== null && httpStatus >= 500 && httpStatus !== 503;
}
