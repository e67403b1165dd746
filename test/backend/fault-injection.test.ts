import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EXECUTE, startTestBackend, type TestBackend, until, workspaceOf } from "./support.js";

let backend: TestBackend | undefined;
let workspace: string;
afterEach(async () => {
  await backend?.stop();
  backend = undefined;
});

async function withFaults(faults: string, extra = {}): Promise<TestBackend> {
  backend = await startTestBackend({ faults, recordPendingPublishMs: 300, ...extra });
  workspace = await workspaceOf(backend);
  return backend;
}

/** The command every test sends: leaves a mark in the workspace each time it runs. */
const BODY = { command: "echo ran >> marks; echo out" };
const headers = { "idempotency-key": "fk-1" };
const marks = () => {
  try {
    return fs.readFileSync(path.join(workspace, "marks"), "utf8");
  } catch {
    return "";
  }
};
const stored = async (b: TestBackend) =>
  (await b.api("GET", "/api/v1/sandbox/default/executions?idempotency_key=fk-1")).json.executions;

describe("faults that pre-empt the request: nothing runs, nothing is stored", () => {
  it("not_started: 503 with the retry hint; the same key later runs", async () => {
    const b = await withFaults("execute:not_started:once");
    const res = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("2");
    expect(res.json.error).toMatchObject({
      code: "not_started",
      details: { reason: "fault_injected", retry_after_ms: 2000 },
    });
    expect(marks()).toBe("");
    expect(await stored(b)).toEqual([]);
    const again = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(again.status).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBeUndefined();
    expect(marks()).toBe("ran\n");
  });

  it.each([
    ["bad_gateway", 502, "text/html", "<title>502 Bad Gateway</title>"],
    ["bare_503", 503, "text/plain", "Service Unavailable"],
  ])("%s: a non-JSON error page", async (fault, status, type, text) => {
    const b = await withFaults(`execute:${fault}`);
    const res = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(res.status).toBe(status);
    expect(res.headers["content-type"]).toBe(type);
    expect(res.text).toContain(text);
    expect(marks()).toBe("");
    expect(await stored(b)).toEqual([]);
  });

  it("internal_error: 500 internal_error, as a bug would answer", async () => {
    const b = await withFaults("execute:internal_error");
    const res = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(res.status).toBe(500);
    expect(res.json.error).toEqual({
      code: "internal_error",
      message: "internal error in the backend (fault injected)",
      details: {},
    });
    expect(marks()).toBe("");
    expect(await stored(b)).toEqual([]);
  });

  it("in_progress: 409 request_in_progress", async () => {
    const b = await withFaults("execute:in_progress");
    const res = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe("request_in_progress");
    expect(marks()).toBe("");
    expect(await stored(b)).toEqual([]);
  });
});

describe("faults after the command ran", () => {
  it("unconfirmed: 409 with execution_id and key; the stored record is readable", async () => {
    const b = await withFaults("execute:unconfirmed:once");
    const res = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(res.status).toBe(409);
    expect(res.json.error).toMatchObject({
      code: "execution_result_unconfirmed",
      details: { execution_id: expect.stringMatching(/^exe_/), idempotency_key: "fk-1" },
    });
    expect(marks()).toBe("ran\n");
    const id = res.json.error.details.execution_id;
    const record = await b.api("GET", `/api/v1/sandbox/default/executions/${id}`);
    expect(record.json).toMatchObject({ outcome: "succeeded", exit_code: 0, stdout: "out\n" });
    // Resubmitting with the key observes; it does not run again.
    const replay = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(replay.json).toMatchObject({ execution_id: id, outcome: "succeeded" });
    expect(marks()).toBe("ran\n");
  });

  it("record_pending: the answer says so; the stored record is published later", async () => {
    const b = await withFaults("execute:record_pending");
    const res = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ outcome: "succeeded", exit_code: 0, record_pending: true });
    const url = `/api/v1/sandbox/default/executions/${res.json.execution_id}`;
    expect((await b.api("GET", url)).json.record_pending).toBe(true);
    await until(async () => (await b.api("GET", url)).json.record_pending === false, 3000, "publication");
    expect(marks()).toBe("ran\n");
  });

  it("stream_lost: outcome unknown without exit information, and every later read of it says so", async () => {
    const b = await withFaults("execute:stream_lost");
    const res = await b.api("POST", EXECUTE, { body: BODY, headers });
    const lost = { outcome: "unknown", system_error: "exec_stream_lost", exit_code: null, signal: null };
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject(lost);
    expect(marks()).toBe("ran\n");
    expect((await b.api("GET", `/api/v1/sandbox/default/executions/${res.json.execution_id}`)).json).toMatchObject(
      lost,
    );
  });

  it("drop: no answer; the execution completes and is readable, by key too", async () => {
    const b = await withFaults("execute:drop:once");
    await expect(
      b.api("POST", EXECUTE, { body: { command: "sleep 0.3; echo ran >> marks" }, headers }),
    ).rejects.toThrow();
    await until(() => marks() === "ran\n", 5000, "the dropped command to run");
    const [record] = await until(async () => {
      const list = await stored(b);
      return list[0]?.outcome === "succeeded" && list;
    });
    expect(record).toMatchObject({ outcome: "succeeded", idempotency_key: "fk-1" });
    const replay = await b.api("POST", EXECUTE, { body: { command: "sleep 0.3; echo ran >> marks" }, headers });
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json.execution_id).toBe(record.execution_id);
    expect(marks()).toBe("ran\n");
  });

  it("malformed: 200 with a body that is not JSON; the record is stored", async () => {
    const b = await withFaults("execute:malformed");
    const res = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(res.status).toBe(200);
    expect(res.json).toBeNull();
    expect(res.text.startsWith('{"execution_id":"exe_')).toBe(true);
    expect(marks()).toBe("ran\n");
    expect((await stored(b))[0]).toMatchObject({ outcome: "succeeded" });
  });

  it("no_exit: outcome failed with neither exit_code nor signal", async () => {
    const b = await withFaults("execute:no_exit");
    const res = await b.api("POST", EXECUTE, { body: BODY, headers });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ outcome: "failed", exit_code: null, signal: null });
    expect(marks()).toBe("ran\n");
  });
});

describe("faults on other routes", () => {
  it("delay: waits before answering", async () => {
    const b = await withFaults("sandboxes.list:delay=300ms");
    const started = Date.now();
    expect((await b.api("GET", "/api/v1/sandboxes")).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect((await b.api("GET", "/api/v1/health")).status).toBe(200);
  });

  it("executions.get: faults shape the answer, not the stored record", async () => {
    const b = await withFaults(
      "executions.get:stream_lost:once,executions.get:malformed:once,executions.get:drop:once",
    );
    const res = await b.api("POST", EXECUTE, { body: BODY });
    const url = `/api/v1/sandbox/default/executions/${res.json.execution_id}`;
    expect((await b.api("GET", url)).json).toMatchObject({ outcome: "unknown", exit_code: null });
    const malformed = await b.api("GET", url);
    expect(malformed.status).toBe(200);
    expect(malformed.json).toBeNull();
    await expect(b.api("GET", url)).rejects.toThrow();
    expect((await b.api("GET", url)).json).toMatchObject({ outcome: "succeeded", exit_code: 0 });
  });

  it("sandbox.create: drop creates the sandbox without answering; * skips health", async () => {
    const b = await startTestBackend({ faults: "*:drop" });
    backend = b;
    expect((await b.api("GET", "/api/v1/health")).status).toBe(200);
    await expect(b.api("POST", "/api/v1/sandbox/create", { body: { name: "made" } })).rejects.toThrow();
    await expect(b.api("GET", "/api/v1/sandboxes")).rejects.toThrow();
    await b.stop();
    backend = await startTestBackend({}, b.dir);
    const list = await backend.api("GET", "/api/v1/sandboxes");
    expect(list.json.sandboxes.map((s: { name: string }) => s.name)).toContain("made");
  });
});
