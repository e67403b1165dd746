// What every run shares: one admission, one registry of live runs, one restart
// recovery of what an earlier run of the backend left, and the ownership fences.

export { admissionFailure, isStorageFailure, storeAdmission } from "./admission.js";
export { fenceExecution, fenceProcess, type Handle } from "./fence.js";
export { type EndReason, type LiveRun, LiveRuns } from "./live-runs.js";
export { type FoundGroup, recordedLeaderAlive, recoverLeftRuns } from "./recovery.js";
export { RunListeners } from "./listeners.js";
export type { RunTerminal, TerminalEnd, TerminalSource, TranscriptRead } from "./terminal-source.js";
