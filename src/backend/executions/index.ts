// Executions: admission, the run, durable event logs and full output files. What the
// rest of the backend may use of them; everything else in this folder is their own.

export { EventLog } from "./events.js";
export { LIVE_QUEUE_MAX_BYTES, type LiveReader } from "./live-output.js";
export { ExecutionManager } from "./manager.js";
export { outputFile, outputSize, readOutputRange } from "./output-files.js";
export { DEFAULT_KILL_GRACE_MS, ExecutionRunner, SYSTEM_ERROR_SANDBOX_START_FAILED } from "./runner.js";
export { type EventRow, type ExecutionRow, ExecutionStore } from "./store.js";
