// better-sqlite3 imported as a module (the rest of src/platform/sqlite.ts requires it),
// so that the Node bundle carries its JavaScript: left to Node's CommonJS loader,
// resolving and compiling its dozen files was about 2.5 ms of every command that
// opens the receipt store. Imported only on Node, ahead of the store's first open
// (preloadSqliteDriver); never under Bun.

import BetterSqlite3 from "better-sqlite3";

export default BetterSqlite3;
