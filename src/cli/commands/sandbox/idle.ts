// A sandbox's idle stop in words (docs/operations.md, "Idle stop"), for `sandbox show`
// and `sandbox update --idle-timeout`.

import { formatDuration } from "../../../common/duration.js";
import type { IdleStatus, SandboxEnvironment } from "../../../protocol/types.js";

/** "after 5m idle (the sandbox's own); stops at T if nothing runs", "off", "… awake: 1 execution". */
export function describeIdle(idle: IdleStatus | undefined, environment: SandboxEnvironment | null): string {
  if (idle === undefined) return "not said by this backend";
  const whose = idle.from === "sandbox" ? "its own" : "the daemon's default";
  if (idle.timeout_ms === null) return `off (${whose})`;
  const after = `after ${formatDuration(idle.timeout_ms)} with nothing running (${whose})`;
  if (environment === null) return `${after}; it has no environment to stop (isolation none)`;
  if (idle.awake.length > 0) return `${after}; awake: ${idle.awake.join(", ")}`;
  if (idle.stops_at !== null) return `${after}; stops at ${idle.stops_at} unless something runs`;
  return `${after}; its environment is stopped`;
}

/** "idle at T" / "requested at T": its environment's last stop by the backend. */
export function describeLastStop(idle: IdleStatus | undefined): string | null {
  const last = idle?.last_stop;
  if (last === null || last === undefined) return null;
  return `${last.reason === "idle" ? "idle" : "stopped on request"} at ${last.at}`;
}
