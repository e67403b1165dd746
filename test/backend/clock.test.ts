// The backend reads time from one clock (BackendOptions.now): the times its records
// say — sandboxes, executions, processes, jobs — come from it, so a test that moves
// the clock sees it everywhere and needs no sleep.

import { describe, expect, it } from "vitest";
import { backendsPerTest, EXECUTE, until } from "./support.js";

const start = backendsPerTest();
const AT = Date.parse("2001-02-03T04:05:06.000Z");
const AT_ISO = new Date(AT).toISOString();
const SANDBOX = "/api/v1/sandbox/default";

describe("the backend's clock", () => {
  it("is the one every record's times are read from", async () => {
    const b = await start({ now: () => AT });

    const exec = await b.api("POST", EXECUTE, { body: { command: "true" } });
    expect(exec.status, exec.text).toBe(200);
    expect(exec.json).toMatchObject({ created_at: AT_ISO, started_at: AT_ISO, finished_at: AT_ISO, duration_ms: 0 });
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
});
