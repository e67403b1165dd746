// Supervised processes: the live ones, recovery and shutdown, one process's life and
// runs, restart back-off and rotated logs. What the rest of the backend may use of
// them; everything else in this folder is their own.

export { DEFAULT_LOG_KEEP_BYTES, DEFAULT_LOG_SEGMENT_BYTES } from "./logs.js";
export type { ProcessRow } from "./store.js";
export { ProcessSupervisor, toProcessRecord } from "./supervisor.js";
