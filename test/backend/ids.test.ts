// The daemon's ids (docs/protocol.md, "Ids"): sandboxes, executions and processes get
// ids whose first 8 characters after the prefix (the short form) no other id of theirs
// has in this daemon's store; `?id_prefix=` on the executions and jobs lists finds ids
// by a prefix through the id's index.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasShortForm, shortId } from "../../src/common/ids.js";
import { SandboxStore } from "../../src/backend/sandboxes/store.js";
import { BackendStore } from "../../src/backend/store/db.js";
import { startTestBackend, type TestBackend, tempDir } from "./support.js";

const API = "/api/v1/sandbox/default";

describe("ids the daemon makes", () => {
  let b: TestBackend;
  beforeAll(async () => {
    b = await startTestBackend();
  });
  afterAll(() => b.stop());

  it("are of the typeable format for sandboxes, executions and processes", async () => {
    const ran = await b.api("POST", `${API}/execute`, { body: { command: ["true"] } });
    expect(ran.status).toBe(200);
    expect(hasShortForm(ran.json.execution_id)).toBe(true);
    expect(hasShortForm(ran.json.sandbox_id)).toBe(true);
    const started = await b.api("POST", `${API}/processes`, { body: { command: ["true"] } });
    expect(started.status).toBe(201);
    expect(hasShortForm(started.json.process_id)).toBe(true);
  });

  it("?id_prefix= lists the executions whose id starts with it, and nothing else", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await b.api("POST", `${API}/execute`, { body: { command: ["true"] } })).json.execution_id);
    }
    for (const id of ids) {
      const found = await b.api("GET", `${API}/executions?id_prefix=${shortId(id)}`);
      expect(found.status).toBe(200);
      expect(found.json.executions.map((e: { execution_id: string }) => e.execution_id)).toEqual([id]);
    }
    const all = await b.api("GET", `${API}/executions?id_prefix=exe_&limit=100`);
    expect(all.json.executions.length).toBeGreaterThanOrEqual(3);
    expect((await b.api("GET", `${API}/executions?id_prefix=exe_zzzzzzzz`)).json.executions).toEqual([]);
    const bad = await b.api("GET", `${API}/executions?id_prefix=${encodeURIComponent("a b")}`);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: "invalid_request", details: { field: "id_prefix" } });
  });

  it("?id_prefix= lists the jobs whose id starts with it", async () => {
    const jobs = [
      { job_id: "build-a", name: "a", command: "true" },
      { job_id: "build-b", name: "b", command: "true" },
      { job_id: "test-a", name: "t", command: "true" },
    ];
    expect((await b.api("POST", `${API}/jobs`, { body: { request_id: "ids-r", jobs } })).status).toBe(201);
    const listed = async (prefix: string) =>
      (await b.api("GET", `${API}/jobs?id_prefix=${prefix}`)).json.jobs.map((j: { job_id: string }) => j.job_id);
    expect(await listed("build-")).toEqual(["build-a", "build-b"]);
    expect(await listed("test")).toEqual(["test-a"]);
    expect(await listed("nope")).toEqual([]);
  });
});

describe("BackendStore ids", () => {
  it("finds ids by prefix through a range, in id order, up to a limit; a new one never takes a short form", () => {
    const dir = tempDir();
    const store = new BackendStore(path.join(dir, "backend.db"));
    const sandboxes = new SandboxStore(store);
    try {
      const sandbox = (id: string) =>
        sandboxes.insertSandbox({
          sandbox_id: id,
          name: id,
          status: "ready",
          isolation: "none",
          network: 0,
          created_at: new Date(0).toISOString(),
          uid: null,
          limits: null,
          network_mode: null,
          publish: null,
          image: null,
          labels: null,
          egress: null,
          idle_timeout_ms: null,
          last_stop: null,
        });
      for (const id of ["sbx_aaaaaaaa00000000", "sbx_aaaaaaaa00000001", "sbx_aaaaaaab00000000"]) sandbox(id);
      expect(store.idsStartingWith("sandboxes", "sbx_aaaaaaaa", 10)).toEqual([
        "sbx_aaaaaaaa00000000",
        "sbx_aaaaaaaa00000001",
      ]);
      expect(store.idsStartingWith("sandboxes", "sbx_aaaaaaa", 2)).toHaveLength(2);
      expect(store.idsStartingWith("sandboxes", "sbx_b", 10)).toEqual([]);
      for (let i = 0; i < 50; i++) {
        const id = store.newId("sandboxes");
        expect(store.idsStartingWith("sandboxes", shortId(id), 1)).toEqual([]);
        sandbox(id);
      }
    } finally {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
