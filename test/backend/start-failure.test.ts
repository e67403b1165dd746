// A run whose sandbox could not be set up never looks like one that ran: executions,
// processes and jobs say `sandbox_start_failed` with the cause and no host path, and
// nothing of bwrap's own messages shows as the command's output (docs/protocol.md).

import { afterAll, beforeAll, expect, it } from "vitest";
import { brokenEtc } from "../support/broken-sandbox.js";
import { describeNeeding } from "../support/requirements.js";
import { startTestBackend, type TestBackend, until } from "./support.js";

const S = "/api/v1/sandbox/box";

describeNeeding("bwrap", "a sandbox that cannot be set up", () => {
  let b: TestBackend;
  const etc = brokenEtc();
  beforeAll(async () => {
    b = await startTestBackend({ drivers: { bwrap: { etcDir: etc.etcDir } } });
    expect((await b.api("POST", "/api/v1/sandbox/create", { body: { name: "box", isolation: "bwrap" } })).status).toBe(
      201,
    );
    // Set up once, as it should be…
    expect((await b.api("POST", `${S}/execute`, { body: { command: ["true"] } })).json.exit_code).toBe(0);
    // …then no more: its environment, stopped, cannot start again.
    etc.breakIt();
    expect((await b.api("POST", `${S}/stop`)).json.was_running).toBe(true);
  });
  afterAll(async () => {
    await b.stop();
  });

  /** No host path of the test's: its temp directories, the backend's data directory. */
  const hostPaths = () => [etc.etcDir, b.dataDir, b.dir];
  const noHostPath = (text: string) => {
    for (const p of hostPaths()) expect(text).not.toContain(p);
    expect(text).not.toContain("bwrap:");
  };

  it("an execution: 500 sandbox_start_failed with the cause; its record is unknown/sandbox_start_failed, no exit code", async () => {
    const res = await b.api("POST", `${S}/execute`, { body: { command: ["sh", "-c", "echo ran"] } });
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe("sandbox_start_failed");
    expect(res.json.error.details.cause).toMatch(/Can't find source path \(a host path\)/);
    noHostPath(res.text);
    const id = res.json.error.details.execution_id;
    const record = (await b.api("GET", `${S}/executions/${id}`)).json;
    expect(record).toMatchObject({
      outcome: "unknown",
      system_error: "sandbox_start_failed",
      exit_code: null,
      signal: null,
      stdout: "",
    });
    expect(record.stderr).toBe(`sbx: the sandbox could not be set up: ${res.json.error.details.cause}\n`);
    // The same key again: the same answer, nothing run.
    const key = "start-failure-replay";
    const first = await b.api("POST", `${S}/execute`, {
      body: { command: ["true"] },
      headers: { "idempotency-key": key },
    });
    const again = await b.api("POST", `${S}/execute`, {
      body: { command: ["true"] },
      headers: { "idempotency-key": key },
    });
    expect([first.status, again.status]).toEqual([500, 500]);
    expect(again.json.error.details.execution_id).toBe(first.json.error.details.execution_id);
  });

  it("a streamed execution: its exit event and end say sandbox_start_failed; no output of bwrap's", async () => {
    const res = await b.api("POST", `${S}/execute`, { body: { command: ["sh", "-c", "echo ran"], stream: true } });
    expect(res.status).toBe(200);
    const events = res.text
      .split("\n\n")
      .filter((f) => f.includes("event: "))
      .map((f) => ({
        type: /event: (\w+)/.exec(f)![1],
        data: JSON.parse(/data: (.*)/.exec(f)![1]!),
      }));
    const exit = events.find((e) => e.type === "exit")!.data;
    expect(exit).toMatchObject({ outcome: "unknown", system_error: "sandbox_start_failed", exit_code: null });
    expect(events.find((e) => e.type === "end")!.data).toEqual({ state: "incomplete", reason: "sandbox_start_failed" });
    const output = events
      .filter((e) => e.type === "output")
      .map((e) => Buffer.from(e.data.data, "base64").toString())
      .join("");
    expect(output).toMatch(/^sbx: the sandbox could not be set up: /);
    noHostPath(output);
  });

  it("a process: 500 sandbox_start_failed, ended start_failed, never started again", async () => {
    const res = await b.api("POST", `${S}/processes`, {
      body: { command: ["sleep", "60"], restart: { policy: "always" } },
    });
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe("sandbox_start_failed");
    noHostPath(res.text);
    const id = res.json.error.details.process_id;
    const process = await until(
      async () => {
        const p = (await b.api("GET", `${S}/processes/${id}`)).json;
        return p.state === "exited" ? p : undefined;
      },
      10_000,
      "the process to be ended",
    );
    expect(process).toMatchObject({ end_reason: "start_failed", outcome: "unknown", restarts: 0, exit_code: null });
  });

  it("a job: failed with a sandbox_start_failed error and no exit code", async () => {
    const res = await b.api("POST", `${S}/jobs`, {
      body: { request_id: `r-${process.pid}-${Date.now()}`, jobs: [{ name: "j", command: "echo ran" }] },
    });
    expect(res.status).toBe(201);
    const id = res.json.jobs[0].job_id;
    const job = await until(
      async () => {
        const j = (await b.api("GET", `${S}/jobs/${id}`)).json;
        return j.status === "failed" ? j : undefined;
      },
      10_000,
      "the job to end",
    );
    expect(job.exit_code).toBeNull();
    expect(job.error).toMatch(/^sandbox_start_failed: the sandbox could not be set up: /);
    noHostPath(JSON.stringify(job));
  });
});
