// Reads go through the executions' domain, so a list and a GET of the same execution
// agree while its end cannot be stored (a full disk: a small tmpfs, as root): both
// say its outcome with record_pending (it ran; do not resubmit), the list filters by
// what the records say, and live_count no longer counts it.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fillUntilFree, smallTmpfs } from "../support/tmpfs.js";
import { backendsPerTest, EXECUTE, until, workspaceOf } from "./support.js";
import { describeNeeding } from "../support/requirements.js";

const EXECUTIONS = "/api/v1/sandbox/default/executions";
const start = backendsPerTest();

describeNeeding("tmpfs", "reads of an execution whose end is not stored yet (a full disk)", () => {
  it("a list and a GET say the same", async (t) => {
    const fsys = smallTmpfs("24m");
    const b = await start({ eventFlushMs: 5 }, fsys.dir);
    t.onTestFinished(async () => {
      await b.stop();
      fsys.cleanup();
    });
    const workspace = await workspaceOf(b);
    execFileSync("mkfifo", [path.join(workspace, "go")]);
    const exec = b.api("POST", EXECUTE, { body: { command: "read x < go; echo done $x" } });
    const id = await until(
      async () => (await b.api("GET", `${EXECUTIONS}?outcome=pending`)).json.executions[0]?.execution_id,
      5000,
      "the execution to start",
    );
    const filler = fillUntilFree(fsys.dir);
    fs.writeFileSync(path.join(workspace, "go"), "now\n");
    expect((await exec).json).toMatchObject({ outcome: "succeeded", record_pending: true });

    const byId = (await b.api("GET", `${EXECUTIONS}/${id}`)).json;
    const list = (await b.api("GET", EXECUTIONS)).json;
    const listed = list.executions.find((e: { execution_id: string }) => e.execution_id === id);
    const said = ({ outcome, exit_code, record_pending, finished_at }: Record<string, unknown>) => ({
      outcome,
      exit_code,
      record_pending,
      finished_at,
    });
    expect(said(byId)).toEqual({
      outcome: "succeeded",
      exit_code: 0,
      record_pending: true,
      finished_at: byId.finished_at,
    });
    expect(said(listed)).toEqual(said(byId));
    expect(list.live_count).toBe(0);
    expect((await b.api("GET", `${EXECUTIONS}?outcome=pending`)).json.executions).toEqual([]);
    const succeeded = (await b.api("GET", `${EXECUTIONS}?outcome=succeeded`)).json.executions;
    expect(succeeded.map((e: { execution_id: string }) => e.execution_id)).toEqual([id]);

    // Stored once there is room: both say so, without record_pending.
    fs.rmSync(filler);
    await until(
      async () => (await b.api("GET", `${EXECUTIONS}/${id}`)).json.record_pending === false,
      20_000,
      "the end to be stored",
    );
    const after = (await b.api("GET", EXECUTIONS)).json.executions[0];
    expect(said(after)).toEqual({ ...said(byId), record_pending: false });
  });
});
