// A request's unknown fields are refused with 400 naming them, never ignored: a
// misspelt field (`memory_bytes` beside `limits`, `cwd` for `working_dir`) must not
// silently become a default. Performed over the backend's real socket.

import { describe, expect, it } from "vitest";
import {
  checkProcessSignalRequest,
  checkProcessStdinRequest,
  checkSandboxCreateRequest,
} from "../../src/protocol/validate.js";
import { sharedBackend, type TestBackend } from "./support.js";

let b: TestBackend;
sharedBackend((backend) => {
  b = backend;
});

const MIB = 1024 * 1024;

describe("unknown fields in a request", () => {
  it("refuses a sandbox create with a limit beside `limits`, and creates nothing", async () => {
    const res = await b.api("POST", "/api/v1/sandbox/create", {
      body: { name: "n1", isolation: "none", memory_bytes: 64 * MIB },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_request");
    expect(res.json.error.details.field).toBe("memory_bytes");
    expect(res.json.error.message).toContain('unknown field "memory_bytes"');
    expect(res.json.error.message).toContain("limits");
    expect((await b.api("GET", "/api/v1/sandbox/n1")).status).toBe(404);
  });

  it("refuses an execute with `cwd` (working_dir misspelt), and runs nothing", async () => {
    const before = (await b.api("GET", "/api/v1/sandbox/default/executions")).json.executions?.length ?? 0;
    const res = await b.api("POST", "/api/v1/sandbox/default/execute", {
      body: { command: ["pwd"], cwd: "/etc" },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("cwd");
    expect(res.json.error.message).toContain('unknown field "cwd"');
    const after = await b.api("GET", "/api/v1/sandbox/default/executions");
    expect(after.status).toBe(200);
    expect(after.json.executions.length).toBe(before);
  });

  it.each([
    ["POST", "sandbox/create", { name: "n2", limits: { memory: 64 * MIB } }, ["limits.memory"]],
    ["POST", "sandbox/create", { name: "n3", publish: [{ port: 80, hostport: 8080 }] }, ["publish[0].hostport"]],
    ["PATCH", "sandbox/default", { limits: { pids: 64 }, name: "x" }, ["name"]],
    ["POST", "sandbox/default/execute", { command: "true", tty: { cols: 80, rows: 24, colls: 1 } }, ["tty.colls"]],
    ["POST", "sandbox/default/execute", { command: "true", timout: 5000, enviroment: {} }, ["timout", "enviroment"]],
    ["POST", "sandbox/default/processes", { command: "true", restart: { polcy: "always" } }, ["restart.polcy"]],
    ["POST", "sandbox/default/processes", { command: "true", cwd: "/" }, ["cwd"]],
    ["POST", "sandbox/default/executions/exe_nothing/cancel", { reson: "x" }, ["reson"]],
  ])("%s %s %j: 400 naming %j", async (method, route, body, names) => {
    const res = await b.api(method, `/api/v1/${route}`, { body });
    expect(res.status, res.text).toBe(400);
    expect(res.json.error.details.field).toBe(names[0]);
    for (const name of names) expect(res.json.error.message).toContain(JSON.stringify(name));
  });

  it("lists nothing it refused", async () => {
    const names = (await b.api("GET", "/api/v1/sandboxes")).json.sandboxes.map((s: { name: string }) => s.name);
    expect(names).not.toContain("n2");
    expect(names).not.toContain("n3");
    const processes = await b.api("GET", "/api/v1/sandbox/default/processes");
    expect(processes.json.processes).toEqual([]);
  });

  it("the checks the client shares refuse them too (stdin, signal)", () => {
    expect(checkProcessStdinRequest({ data: "", eof: true, of: true })?.field).toBe("of");
    expect(checkProcessSignalRequest({ signal: "TERM", force: true })?.field).toBe("force");
    expect(checkSandboxCreateRequest({ name: "ok", network: false })).toBeNull();
  });
});
