// What every run shares: one admission and one registry of live runs.

export { admissionFailure, isStorageFailure, storeAdmission } from "./admission.js";
export { type EndReason, type LiveRun, LiveRuns } from "./live-runs.js";
