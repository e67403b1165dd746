// What still runs in a sandbox, as its domains (jobs, executions, supervised processes)
// count it: removing the sandbox is refused (sandbox_busy) while any of it does.

import { ErrorCodes } from "../../protocol/types.js";
import { Refusal } from "../refusal.js";
import type { SandboxRow } from "./store.js";

/** What still runs in a sandbox, by its domains: removal is refused while any of it does. */
export interface SandboxWork {
  jobs: number;
  executions: number;
  processes: number;
}

/** Refuses (sandbox_busy) saying what runs, and how to end it, while anything runs in the sandbox. */
export function refuseWhileBusy(row: SandboxRow, work: SandboxWork): void {
  if (work.jobs > 0) {
    throw new Refusal(
      ErrorCodes.sandboxBusy,
      `sandbox ${row.name} has ${work.jobs} job(s) not ended; cancel them (sbx jobs cancel), or remove it with force`,
      { sandbox_id: row.sandbox_id, jobs: work.jobs },
    );
  }
  const running = work.executions;
  if (running > 0) {
    throw new Refusal(
      ErrorCodes.sandboxBusy,
      `sandbox ${row.name} has ${running} running execution(s); wait for them, cancel them, or remove it with force`,
      { sandbox_id: row.sandbox_id, running },
    );
  }
  const processes = work.processes;
  if (processes > 0) {
    throw new Refusal(
      ErrorCodes.sandboxBusy,
      `sandbox ${row.name} has ${processes} supervised process(es) not ended; stop them, or remove it with force`,
      { sandbox_id: row.sandbox_id, processes },
    );
  }
}
