// The backend reads time from one clock (BackendOptions.now): the times its records
// say — sandboxes, executions, processes, jobs — come from it, so a test that moves
// the clock sees it everywhere and needs no sleep.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { backendsPerTest, EXECUTE, until } from "./support.js";

const start = backendsPerTest();
const AT = Date.parse("2001-02-03T04:05:06.000Z");
const AT_ISO = new Date(AT).toISOString();
const SANDBOX = "/api/v1/sandbox/default";

describe("the backend's clock", () => {
  it("is the one every record's times are read from", async () => {
    const b = await start({ now: () => AT });

    const exec = await b.api("POST", EXECUTE, { body: { command: "echo out" } });
    expect(exec.status, exec.text).toBe(200);
    expect(exec.json).toMatchObject({ created_at: AT_ISO, started_at: AT_ISO, finished_at: AT_ISO, duration_ms: 0 });
    // Its event log too: started, output, exit and end all say the backend's time.
    const events = (await b.api("GET", `${SANDBOX}/executions/${exec.json.execution_id}/events`)).json.events;
    expect(events.map((e: { type: string; at: string }) => [e.type, e.at])).toEqual([
      ["started", AT_ISO],
      ["output", AT_ISO],
      ["exit", AT_ISO],
      ["end", AT_ISO],
    ]);
    expect((await b.api("GET", SANDBOX)).json.created_at).toBe(AT_ISO);

    const started = await b.api("POST", `${SANDBOX}/processes`, { body: { command: "true" } });
    expect(started.status, started.text).toBe(201);
    const ended = await until(async () => {
      const p = (await b.api("GET", `${SANDBOX}/processes/${started.json.process_id}`)).json;
      return p.state === "exited" ? p : undefined;
    });
    expect(ended).toMatchObject({ created_at: AT_ISO, started_at: AT_ISO, ended_at: AT_ISO });
    expect(ended.last_run).toMatchObject({ started_at: AT_ISO, ended_at: AT_ISO });

    const submitted = await b.api("POST", `${SANDBOX}/jobs`, {
      body: { request_id: "clock", jobs: [{ name: "a", command: "true" }] },
    });
    expect(submitted.status, submitted.text).toBe(201);
    const job = await until(async () => {
      const j = (await b.api("GET", `${SANDBOX}/jobs/${submitted.json.jobs[0].job_id}`)).json;
      return j.status === "succeeded" ? j : undefined;
    });
    expect(job).toMatchObject({ created_at: AT_ISO, started_at: AT_ISO, finished_at: AT_ISO });
  });

  it("decides how long a replayed key waits for its running execution", async () => {
    // Admitted "in 2001": the replay waits out the execution's timeout from then on this
    // clock (not the wall clock's 25 years later, which would answer `pending` at once).
    const b = await start({ now: () => AT });
    const workspace = (await b.api("GET", SANDBOX)).json.host_workspace;
    const key = { "Idempotency-Key": "clock-replay" };
    const body = { command: "while [ ! -e go ]; do sleep 0.02; done; echo done" };
    const first = b.api("POST", EXECUTE, { body, headers: key });
    await until(async () => (await b.api("GET", `${SANDBOX}/executions?outcome=pending`)).json.executions[0]);
    const replay = b.api("POST", EXECUTE, { body, headers: key });
    fs.writeFileSync(path.join(workspace, "go"), "");
    expect((await replay).json).toMatchObject({ outcome: "succeeded", stdout: "done\n" });
    expect((await first).json).toMatchObject({ outcome: "succeeded", stdout: "done\n" });
  });
});
