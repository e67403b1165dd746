// What every run shares: one admission, one registry of live runs and one restart
// recovery of what an earlier run of the backend left.

export { admissionFailure, isStorageFailure, storeAdmission } from "./admission.js";
export { type EndReason, type LiveRun, LiveRuns } from "./live-runs.js";
export { type FoundGroup, recoverLeftRuns } from "./recovery.js";
