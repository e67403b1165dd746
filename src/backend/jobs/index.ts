// Jobs: admission by request id, scheduling, budgeted output, recovery. What the rest
// of the backend may use of them; everything else in this folder is their own.

export { JobManager } from "./manager.js";
export type { JobRow } from "./store.js";
