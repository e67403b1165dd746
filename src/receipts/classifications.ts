// The classifications a receipt can have (docs/classification.md), apart from the
// classifier (classify.ts) so that the command tree can offer them as choices
// without loading it at start-up.

export type Classification =
  | "succeeded"
  | "admitted"
  | "failed"
  | "timed_out"
  | "cancelled"
  | "outcome_unknown"
  | "result_unconfirmed"
  | "in_progress"
  | "record_pending"
  | "running"
  | "not_started"
  | "rejected"
  | "local_timeout"
  | "dispatched";

export const CLASSIFICATIONS: readonly Classification[] = [
  "succeeded",
  "admitted",
  "failed",
  "timed_out",
  "cancelled",
  "outcome_unknown",
  "result_unconfirmed",
  "in_progress",
  "record_pending",
  "running",
  "not_started",
  "rejected",
  "local_timeout",
  "dispatched",
];

/**
 * Classifications that leave a person in doubt: something may have run, nothing is
 * confirmed. `running` is not among them: the backend said where it is (docs/classification.md).
 */
export const IN_DOUBT: readonly Classification[] = [
  "dispatched",
  "outcome_unknown",
  "local_timeout",
  "result_unconfirmed",
  "in_progress",
  "record_pending",
];
