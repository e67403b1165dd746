// Ownership fences (docs/protocol.md, "Ownership fences"): a request that acts on an
// execution or a supervised process may name the handle it was issued against — the
// run (a process's generation) and the boot of the backend that started it — and is
// refused with 409 stale_handle, nothing done, while another run or another boot's run
// is current. The caller checks and acts in one turn of the event loop.

import { ErrorCodes, type Handle } from "../../protocol/types.js";
import { Refusal } from "../refusal.js";

export type { Handle };

/**
 * A process's handle against its current run: `run` and the boot that run was started
 * in (null for a record kept from before boots were recorded, which no boot names).
 */
export function fenceProcess(processId: string, handle: Handle, current: { run: number; boot: string | null }): void {
  const staleRun = handle.run !== undefined && handle.run !== current.run;
  const staleBoot = handle.boot !== undefined && handle.boot !== current.boot;
  if (!staleRun && !staleBoot) return;
  const named = `${processId}${handle.run === undefined ? "" : `@${handle.run}`}`;
  const why = staleRun
    ? `is not the current run of the process (it is run ${current.run})`
    : `names ${handle.boot}, but the process's current run (run ${current.run}) was started in ${bootName(current.boot)}`;
  throw new Refusal(ErrorCodes.staleHandle, `${named} ${why}; nothing was done`, {
    process_id: processId,
    ...(handle.run !== undefined && { run: handle.run }),
    current_run: current.run,
    ...(handle.boot !== undefined && { boot: handle.boot }),
    current_boot: current.boot,
  });
}

/**
 * An execution's handle against the boot it ran in. An execution has one run, never
 * started again under its id, so only a handle naming another boot is stale: its own
 * boot stays its own after a restart (its record survives; its process ended with that boot).
 */
export function fenceExecution(executionId: string, boot: string | undefined, current: string | null): void {
  if (boot === undefined || boot === current) return;
  throw new Refusal(
    ErrorCodes.staleHandle,
    `${executionId} names ${boot}, but the execution ran in ${bootName(current)}; nothing was done`,
    { execution_id: executionId, boot, current_boot: current },
  );
}

function bootName(boot: string | null): string {
  return boot === null ? "a backend boot from before boots were recorded" : boot;
}
