import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EXECUTE, startTestBackend, type TestBackend, until, workspaceOf } from "./support.js";

let backend: TestBackend | undefined;
afterEach(async () => {
  await backend?.stop();
  backend = undefined;
});

const key = (k: string) => ({ "idempotency-key": k });

describe("Idempotency-Key on execute", () => {
  it("replays the first answer for the same key and body, and runs the command once", async () => {
    backend = await startTestBackend();
    const workspace = await workspaceOf(backend);
    const body = JSON.stringify({ command: "echo ran >> runs.txt; echo done" });
    const first = await backend.api("POST", EXECUTE, { raw: body, headers: key("k-1") });
    expect(first.status).toBe(200);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect(first.json).toMatchObject({ outcome: "succeeded", idempotency_key: "k-1", stdout: "done\n" });

    const again = await backend.api("POST", EXECUTE, { raw: body, headers: key("k-1") });
    expect(again.status).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(fs.readFileSync(path.join(workspace, "runs.txt"), "utf8")).toBe("ran\n");

    // Same key, other body bytes (even equivalent JSON) → 422; nothing runs.
    const other = await backend.api("POST", EXECUTE, {
      raw: JSON.stringify({ command: "echo ran >> runs.txt;  echo done" }),
      headers: key("k-1"),
    });
    expect(other.status).toBe(422);
    expect(other.json.error).toMatchObject({ code: "idempotency_key_reused", details: { idempotency_key: "k-1" } });
    expect(fs.readFileSync(path.join(workspace, "runs.txt"), "utf8")).toBe("ran\n");

    // The key is scoped to the path: the same key elsewhere is another request.
    await backend.api("POST", "/api/v1/sandbox/create", { body: { name: "other" } });
    const elsewhere = await backend.api("POST", "/api/v1/sandbox/other/execute", { raw: body, headers: key("k-1") });
    expect(elsewhere.headers["idempotent-replayed"]).toBeUndefined();
    expect(elsewhere.json.execution_id).not.toBe(first.json.execution_id);

    const found = await backend.api("GET", "/api/v1/sandbox/default/executions?idempotency_key=k-1");
    expect(found.json.executions.map((e: { execution_id: string }) => e.execution_id)).toEqual([
      first.json.execution_id,
    ]);
  });

  it("refuses a malformed key", async () => {
    backend = await startTestBackend();
    const res = await backend.api("POST", EXECUTE, { body: { command: "true" }, headers: key("bad key!") });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field: "Idempotency-Key" } });
  });

  it("stores nothing for a request rejected by validation", async () => {
    backend = await startTestBackend();
    const bad = await backend.api("POST", EXECUTE, { body: { command: "true", timeout: 5 }, headers: key("k-400") });
    expect(bad.status).toBe(400);
    const good = await backend.api("POST", EXECUTE, { body: { command: "true" }, headers: key("k-400") });
    expect(good.status).toBe(200);
    expect(good.headers["idempotent-replayed"]).toBeUndefined();
    expect(good.json.outcome).toBe("succeeded");
  });

  it("answers 409 request_in_progress while the first is still being admitted", async () => {
    backend = await startTestBackend({ faults: "execute:delay=800ms:once" });
    const body = { command: "echo once" };
    // Sent together: whichever the backend admits first holds the key through its delay,
    // and the other finds it in progress (which one is the kernel's to decide).
    const both = [0, 1].map(() => backend!.api("POST", EXECUTE, { body, headers: key("k-busy") }));
    const refused = await Promise.race(both);
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("request_in_progress");
    const different = await backend.api("POST", EXECUTE, { body: { command: "echo twice" }, headers: key("k-busy") });
    expect(different.status).toBe(422);
    const answers = await Promise.all(both);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 200)!.json).toMatchObject({ outcome: "succeeded", stdout: "once\n" });
    const list = await backend.api("GET", "/api/v1/sandbox/default/executions?idempotency_key=k-busy");
    expect(list.json.executions).toHaveLength(1);
  });

  it("makes a replay of a running execution wait for its end, like the original", async () => {
    backend = await startTestBackend();
    const body = { command: "sleep 0.6; echo slow" };
    const first = backend.api("POST", EXECUTE, { body, headers: key("k-slow") });
    await until(async () => {
      const list = await backend!.api("GET", "/api/v1/sandbox/default/executions?idempotency_key=k-slow");
      return list.json.executions.length === 1;
    });
    const replay = await backend.api("POST", EXECUTE, { body, headers: key("k-slow") });
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json).toMatchObject({ outcome: "succeeded", stdout: "slow\n" });
    expect(replay.json.execution_id).toBe((await first).json.execution_id);
  });

  it("forgets keys after the retention period", async () => {
    let now = Date.now();
    backend = await startTestBackend({ keyRetentionMs: 60_000, now: () => now });
    const body = { command: "echo x" };
    const first = await backend.api("POST", EXECUTE, { body, headers: key("k-old") });
    now += 60_001;
    const second = await backend.api("POST", EXECUTE, { body, headers: key("k-old") });
    expect(second.headers["idempotent-replayed"]).toBeUndefined();
    expect(second.json.execution_id).not.toBe(first.json.execution_id);
  });
});

describe("Idempotency-Key on sandbox create", () => {
  it("replays the 201 and creates one sandbox", async () => {
    backend = await startTestBackend();
    const body = { name: "once" };
    const first = await backend.api("POST", "/api/v1/sandbox/create", { body, headers: key("c-1") });
    const again = await backend.api("POST", "/api/v1/sandbox/create", { body, headers: key("c-1") });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json).toEqual(first.json);
    const reused = await backend.api("POST", "/api/v1/sandbox/create", {
      body: { name: "twice" },
      headers: key("c-1"),
    });
    expect(reused.status).toBe(422);
    expect((await backend.api("GET", "/api/v1/sandboxes")).json.sandboxes).toHaveLength(1);
  });
});

describe("Idempotency-Key and the query string", () => {
  const processes = "/api/v1/sandbox/default/processes";
  const raw = (k: string) => ({ "idempotency-key": k, "content-type": "application/octet-stream" });

  it("treats a differing query as another request: 422, not a replay", async () => {
    backend = await startTestBackend();
    const started = await backend.api("POST", processes, { body: { command: ["cat"], stdin: true } });
    expect(started.status).toBe(201);
    const pid = started.json.process_id;

    const first = await backend.api("POST", `${processes}/${pid}/stdin`, { raw: "a", headers: raw("s-1") });
    expect(first.status).toBe(200);
    expect(first.json.eof).toBe(false);
    const eof = await backend.api("POST", `${processes}/${pid}/stdin?eof=true`, { raw: "a", headers: raw("s-1") });
    expect(eof.status).toBe(422);
    expect(eof.json.error.code).toBe("idempotency_key_reused");
    // The same query, in another order or not, replays.
    const again = await backend.api("POST", `${processes}/${pid}/stdin`, { raw: "a", headers: raw("s-1") });
    expect(again.headers["idempotent-replayed"]).toBe("true");

    const stop = await backend.api("DELETE", `${processes}/${pid}?grace_ms=100&remove=false`, { headers: key("d-1") });
    expect(stop.status).toBe(200);
    const reordered = await backend.api("DELETE", `${processes}/${pid}?remove=false&grace_ms=100`, {
      headers: key("d-1"),
    });
    expect(reordered.headers["idempotent-replayed"]).toBe("true");
    for (const q of ["", "?grace_ms=100&remove=true", "?grace_ms=200&remove=false"]) {
      const other = await backend.api("DELETE", `${processes}/${pid}${q}`, { headers: key("d-1") });
      expect(other.status, q).toBe(422);
      expect(other.json.error.code).toBe("idempotency_key_reused");
    }
    // The process was not removed by a replayed answer.
    expect((await backend.api("GET", `${processes}/${pid}`)).status).toBe(200);
  });
});
