// How loaded this machine is, as a factor for guards that only keep a broken test from
// hanging (never a claim about speed): on a machine loaded past its cores (a CI host shared
// with other work: load 25 on 2 cores was seen, and 90 with a suite beside eight others)
// everything a test waits for takes longer in proportion, so the guard grows with the load.

import os from "node:os";

/** The 1-minute load per core, clamped to 1..max. */
export function loadScale(max = 4): number {
  const [oneMinute = 0] = os.loadavg();
  const perCore = oneMinute / Math.max(1, os.availableParallelism());
  return Math.min(max, Math.max(1, perCore));
}
