// Resource limits for people (sandbox show, daemon status) and from flags (sandbox
// create, sandbox update): `--memory 512m --pids 256 --cpus 1.5 --tmp-size 64m --disk 10g`,
// `none` to lift one (docs/drivers.md, "Limits").

import { UsageError } from "../../common/errors.js";
import { formatSize, parseSize } from "../../common/sizes.js";
import type { LimitName, LimitStatus, SandboxLimitsRequest } from "../../protocol/types.js";
import { LIMIT_MINIMUM } from "../../protocol/validate.js";

/** Each limit's flag and field, in the order they are shown. */
export const LIMIT_FLAGS: ReadonlyArray<{
  limit: LimitName;
  flag: string;
  option: "memory" | "pids" | "cpus" | "tmpSize" | "disk";
  field: keyof SandboxLimitsRequest;
  kind: "size" | "count" | "cores";
}> = [
  { limit: "memory", flag: "--memory", option: "memory", field: "memory_bytes", kind: "size" },
  { limit: "pids", flag: "--pids", option: "pids", field: "pids", kind: "count" },
  { limit: "cpu", flag: "--cpus", option: "cpus", field: "cpus", kind: "cores" },
  { limit: "tmp", flag: "--tmp-size", option: "tmpSize", field: "tmp_bytes", kind: "size" },
  { limit: "workspace", flag: "--disk", option: "disk", field: "workspace_bytes", kind: "size" },
];

export type LimitFlagValues = Partial<Record<(typeof LIMIT_FLAGS)[number]["option"], string>>;

/** The limits the flags ask for (only those given); refuses a value that is not one, naming the flag. */
export function parseLimitFlags(raw: LimitFlagValues): SandboxLimitsRequest {
  const out: SandboxLimitsRequest = {};
  for (const f of LIMIT_FLAGS) {
    const text = raw[f.option];
    if (text === undefined) continue;
    if (text.trim().toLowerCase() === "none") {
      out[f.field] = null;
      continue;
    }
    const value =
      f.kind === "size"
        ? parseSize(text)
        : f.kind === "count"
          ? /^\d+$/.test(text.trim())
            ? Number(text)
            : null
          : /^\d+(\.\d+)?$/.test(text.trim())
            ? Number(text)
            : null;
    const example = f.kind === "size" ? "512m, 2GiB" : f.kind === "count" ? "256" : "1.5";
    if (value === null || !Number.isFinite(value)) {
      throw new UsageError(
        `${f.flag} ${JSON.stringify(text)} is not a ${f.kind === "size" ? "size" : "number"} (e.g. ${example}, or none)`,
      );
    }
    const min = LIMIT_MINIMUM[f.field];
    if (value < min) {
      throw new UsageError(
        `${f.flag} ${text} is below the smallest that runs a sandbox (${limitValueText(f.limit, min)})`,
      );
    }
    out[f.field] = value;
  }
  return out;
}

/** A limit's value as a person reads it: "128 MiB", "64 processes", "1.5 CPUs", "no limit". */
export function limitValueText(limit: LimitName, value: number | null): string {
  if (value === null) return "no limit";
  if (limit === "pids") return `${value} processes`;
  if (limit === "cpu") return `${value} CPU${value === 1 ? "" : "s"}`;
  return formatSize(value);
}

/**
 * One line per limit: its value, and whether and how it is enforced (or why not). For
 * the backend (`defaults`), the value is what a new sandbox gets.
 */
export function limitLines(status: readonly LimitStatus[], defaults = false): Array<[string, string]> {
  return status.map((s) => {
    const value = `${limitValueText(s.limit, s.value)}${defaults ? " by default" : ""}`;
    if (s.enforced) return [`limit_${s.limit}`, `${value}, enforced: ${s.how}`];
    if (s.value === null) {
      return [
        `limit_${s.limit}`,
        s.how === null ? `${value} (${s.reason ?? "not enforced here"})` : `${value} (when set: ${s.how})`,
      ];
    }
    return [`limit_${s.limit}`, `${value}, NOT ENFORCED: ${s.reason ?? "no mechanism here"}`];
  });
}
