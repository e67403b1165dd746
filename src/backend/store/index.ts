// The backend database: the engine alone (opened once, migrated, transactions,
// TableAccess). What the rest of the backend may use of it; each domain keeps its own
// statements beside it. It imports no domain: retention, which reads the domains, is
// retention/'s.

export { BackendStore, columnsOf, TableAccess } from "./db.js";
