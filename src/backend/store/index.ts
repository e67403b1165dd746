// The backend database (opened once, migrated) and retention. What the rest of the
// backend may use of them; each domain keeps its own statements beside it.

export { BackendStore, columnsOf, TableAccess } from "./db.js";
export { DEFAULT_RETAIN_BYTES, DEFAULT_RETAIN_MS, Retention } from "./retention.js";
