// What a command used (docs/operations.md, "Per-command usage"), in one line for a
// person: `receipts show`'s "Used". A figure that could not be had says so, never 0.

import { formatBytes } from "./bytes.js";

interface UsageLike {
  cpu_user_us?: unknown;
  cpu_system_us?: unknown;
  memory_peak_bytes?: unknown;
  oom_kills?: unknown;
  limits_hit?: unknown;
  unavailable?: unknown;
}

function seconds(us: number): string {
  return us >= 10_000_000 ? `${(us / 1e6).toFixed(1)} s` : us >= 1000 ? `${(us / 1e6).toFixed(3)} s` : `${us} µs`;
}

/** One line: CPU user/system, memory peak, limits hit; "not measured (why)" for what is missing. */
export function usageLine(usage: UsageLike): string {
  const why = (key: string) => {
    const u = usage.unavailable as Record<string, unknown> | undefined;
    const w = u?.[key];
    return typeof w === "string" ? `not measured (${w})` : "not measured";
  };
  const user = usage.cpu_user_us;
  const sys = usage.cpu_system_us;
  const cpu =
    typeof user === "number" && typeof sys === "number"
      ? `cpu ${seconds(user)} user, ${seconds(sys)} system`
      : `cpu ${why("cpu")}`;
  const peak = usage.memory_peak_bytes;
  const memory = typeof peak === "number" ? `memory peak ${formatBytes(peak)}` : `memory peak ${why("memory")}`;
  const hit = Array.isArray(usage.limits_hit) ? usage.limits_hit.filter((h) => typeof h === "string") : [];
  const kills = typeof usage.oom_kills === "number" && usage.oom_kills > 0 ? `, OOM kills ${usage.oom_kills}` : "";
  const limits = hit.length === 0 ? "no limit hit" : `limits hit: ${hit.join(", ")}`;
  return `${cpu}; ${memory}; ${limits}${kills}`;
}
