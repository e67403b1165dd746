// The column lists the backend's row access is written with (each domain's store.ts)
// are the tables' columns as the migrations made them: PRAGMA table_info of a
// freshly migrated backend.db, table by table. (The type checker keeps each list
// equal to its row type.)

import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EXECUTION_COLUMNS } from "../../src/backend/executions/store.js";
import { PROCESS_COLUMNS } from "../../src/backend/processes/store.js";
import { SANDBOX_COLUMNS } from "../../src/backend/sandboxes/store.js";
import { BackendStore } from "../../src/backend/store/db.js";
import { JOB_COLUMNS, JOB_REQUEST_COLUMNS } from "../../src/backend/jobs/store.js";
import { openDatabase } from "../../src/platform/sqlite.js";
import { tempDir } from "./support.js";

const file = path.join(tempDir(), "backend.db");
new BackendStore(file).close();
const db = openDatabase(file);
afterAll(() => db.close());

function tableColumns(table: string): string[] {
  return (db.pragma(`table_info(${table})`) as Array<{ name: string }>).map((c) => c.name);
}

describe("backend.db's column lists", () => {
  it.each([
    ["sandboxes", SANDBOX_COLUMNS],
    ["executions", EXECUTION_COLUMNS],
    ["processes", PROCESS_COLUMNS],
    ["jobs", JOB_COLUMNS],
    ["job_requests", JOB_REQUEST_COLUMNS],
  ])("%s: the list names every column of the table, and only those", (table, listed) => {
    const columns = tableColumns(table);
    expect(columns.length).toBeGreaterThan(0);
    expect([...listed].sort()).toEqual(columns.sort());
  });
});
