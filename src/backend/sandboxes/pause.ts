// Pause and resume (docs/operations.md, "Pause and resume"): a paused sandbox's
// processes are frozen by the cgroup freezer (drivers/limits/freezer.ts) — they use no
// CPU and handle nothing — until it is resumed; its memory, /tmp, connections and
// terminals stay, and wait. What a pause means for the rest:
// - a new command (execute, process start) is refused, 409 sandbox_paused naming
//   `sbx sandbox resume NAME`: nothing of it runs, and nothing resumes by surprise;
// - a timeout clock keeps running (timeouts are wall-clock bounds): one that passes
//   while paused ends its command as soon as the sandbox is resumed (timed_out);
// - published ports, port forwards and terminals keep their connections; their bytes
//   wait until the processes run again;
// - stop, rm and the daemon's shutdown thaw it first (a frozen process cannot even die).

import { ErrorCodes, type Isolation } from "../../protocol/types.js";
import type { EnvironmentStatus, Limiter, SandboxDriver, SandboxPlacement } from "../drivers/index.js";
import { Refusal } from "../refusal.js";

export interface PauseTarget {
  name: string;
  sandboxId: string;
  isolation: Isolation;
  driver: SandboxDriver;
  placement: SandboxPlacement;
}

/** Freezes every process of the sandbox; resolves once they all stopped. Refused saying why it cannot. */
export async function pauseSandbox(limits: Limiter, t: PauseTarget): Promise<void> {
  const problem = limits.pauseProblem(t.isolation);
  if (problem !== null) {
    throw new Refusal(ErrorCodes.pauseUnavailable, `sandbox ${t.name} cannot be paused here: ${problem}`, {
      reason: problem,
    });
  }
  const state = t.driver.environment?.(t.placement).state ?? "stopped";
  if (state === "stopped") {
    throw new Refusal(ErrorCodes.sandboxNotRunning, `sandbox ${t.name} is not running: nothing to pause`, {
      sandbox_id: t.sandboxId,
    });
  }
  // One still starting is paused once it runs (its cgroup is made when it starts).
  if (state === "starting") await t.driver.start?.(t.placement);
  try {
    await limits.freeze(t.sandboxId);
  } catch (err) {
    const reason = (err as Error).message;
    throw new Refusal(ErrorCodes.pauseUnavailable, `sandbox ${t.name} could not be paused: ${reason}`, { reason });
  }
}

/** The environment as `sandbox show` tells it: "paused" while frozen. */
export function withPause(env: EnvironmentStatus | null, frozen: boolean): EnvironmentStatus | null {
  if (env === null || env.state === "stopped" || !frozen) return env;
  return { ...env, state: "paused" };
}

/** Refuses a new command in a paused sandbox (409 sandbox_paused), naming the command that resumes it. */
export function requireUnpaused(limits: Limiter, sandbox: { sandbox_id: string; name: string }): void {
  if (!limits.frozen(sandbox.sandbox_id)) return;
  const next = `sbx sandbox resume ${sandbox.name}`;
  throw new Refusal(
    ErrorCodes.sandboxPaused,
    `sandbox ${sandbox.name} is paused: nothing was run; resume it first (${next})`,
    { sandbox_id: sandbox.sandbox_id, next },
  );
}
