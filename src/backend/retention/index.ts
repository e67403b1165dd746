// Retention: what the backend keeps, and for how long (docs/protocol.md, "Retention").
// It reads the domains it sweeps (executions, processes, sandboxes) and the store, so
// it sits beside the wiring, above them: nothing below imports it.

export { DEFAULT_RETAIN_BYTES, DEFAULT_RETAIN_MS, Retention } from "./retention.js";
