// Idle stop (docs/operations.md, "Idle stop"): a sandbox's idle_timeout_ms on the wire —
// 0 is off, else at least a second; on update null goes back to the daemon's default.

import type { FieldProblem } from "./validate.js";

/** The shortest idle timeout: one second. */
export const IDLE_TIMEOUT_MIN_MS = 1000;
/** The longest: 365 days. */
export const IDLE_TIMEOUT_MAX_MS = 365 * 86_400_000;

/** Why a request's idle_timeout_ms cannot be used, or null (`nullable`: update, where null is the daemon's default). */
export function checkIdleTimeout(value: unknown, nullable: boolean): FieldProblem | null {
  if (value === null && nullable) return null;
  const ok =
    typeof value === "number" &&
    Number.isSafeInteger(value) &&
    (value === 0 || (value >= IDLE_TIMEOUT_MIN_MS && value <= IDLE_TIMEOUT_MAX_MS));
  if (ok) return null;
  return {
    field: "idle_timeout_ms",
    message: `idle_timeout_ms must be 0 (off) or milliseconds from ${IDLE_TIMEOUT_MIN_MS} to ${IDLE_TIMEOUT_MAX_MS}${nullable ? ", or null (the daemon's default)" : ""}`,
  };
}
