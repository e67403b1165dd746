import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { Readable } from "node:stream";
import { Agent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { startBackend } from "../../src/backend/backend.js";
import { DEFAULT_LIMITS, LIMIT_NAMES } from "../../src/backend/drivers/limits/spec.js";
import { VERSION } from "../../src/version.js";
import {
  BWRAP,
  processesWithArg,
  startTestBackend,
  type TestBackend,
  tcpClient,
  tempDir,
  uniqueSleep,
  until,
} from "./support.js";

let backend: TestBackend | undefined;
afterEach(async () => {
  await backend?.stop();
  backend = undefined;
});

describe("health and listening", () => {
  it("answers health on a 0600 socket in a 0700 directory", async () => {
    backend = await startTestBackend();
    const res = await backend.api("GET", "/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      ok: true,
      version: VERSION,
      protocol: 1,
      backend: "local",
      started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      boot: expect.stringMatching(/^boot_[0-9a-f]{16}$/),
      isolation: {
        default: BWRAP.available ? "bwrap" : "none",
        bwrap: BWRAP,
        none: { available: true, reason: null, version: null },
        user_network: expect.objectContaining({ available: expect.any(Boolean) }),
      },
      limits: LIMIT_NAMES.map((limit) => expect.objectContaining({ limit, enforced: expect.any(Boolean) })),
    });
    expect(fs.statSync(backend.socketPath).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(backend.socketPath)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(backend.dataDir, "backend.db")).mode & 0o777).toBe(0o600);
    expect(backend.logs).toContain(`listening on ${backend.socketPath}`);
    expect(backend.logs.some((l) => /^GET \/api\/v1\/health 200 \d+ms$/.test(l))).toBe(true);
  });

  it("removes the socket when closed", async () => {
    backend = await startTestBackend();
    await backend.stop();
    expect(fs.existsSync(backend.socketPath)).toBe(false);
  });

  it("replaces a dead socket file but refuses a live one or a non-socket", async () => {
    const dir = tempDir();
    const socketPath = path.join(dir, "run", "sbx.sock");
    fs.mkdirSync(path.dirname(socketPath), { recursive: true });
    fs.writeFileSync(socketPath, "not a socket");
    await expect(startBackend({ dataDir: path.join(dir, "data"), socketPath })).rejects.toMatchObject({
      code: "socket_path_not_socket",
    });
    fs.rmSync(socketPath);

    // A socket left by a process that died without cleaning up.
    const script = `require("net").createServer().listen(${JSON.stringify(socketPath)}, () => process.kill(process.pid, "SIGKILL"))`;
    spawnSync(process.execPath, ["-e", script]);
    expect(fs.lstatSync(socketPath).isSocket()).toBe(true);
    backend = await startTestBackend({}, dir);
    expect((await backend.api("GET", "/api/v1/health")).status).toBe(200);

    await expect(startBackend({ dataDir: path.join(dir, "data2"), socketPath })).rejects.toMatchObject({
      code: "socket_in_use",
    });
    // The refused start left the live socket alone.
    expect((await backend.api("GET", "/api/v1/health")).status).toBe(200);
  });

  it("requires a strong token on TCP: a short one is refused before listening", async () => {
    const dataDir = tempDir();
    for (const token of ["i", "s3cret-token", "x".repeat(31)]) {
      await expect(startBackend({ dataDir, listen: { host: "127.0.0.1", port: 0 }, token })).rejects.toMatchObject({
        code: "token_too_weak",
      });
    }
    // Nothing was opened or left behind for a refused start.
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });

  it("requires a token on TCP and compares it", async () => {
    await expect(startBackend({ dataDir: tempDir(), listen: { host: "127.0.0.1", port: 0 } })).rejects.toMatchObject({
      code: "token_required",
    });
    const logs: string[] = [];
    const token = "s3cret-token-0123456789abcdefghijkl";
    const handle = await startBackend({
      dataDir: tempDir(),
      listen: { host: "127.0.0.1", port: 0 },
      token,
      log: (l) => logs.push(l),
    });
    const client = tcpClient(handle.port!);
    try {
      const none = await client.api("GET", "/api/v1/health");
      expect(none.status).toBe(401);
      expect(none.json.error.code).toBe("unauthorized");
      expect((await client.api("GET", "/api/v1/health", { headers: { authorization: "Bearer wrong" } })).status).toBe(
        401,
      );
      expect(
        (await client.api("GET", "/api/v1/nope", { headers: { authorization: `Bearer ${token}-longer` } })).status,
      ).toBe(401);
      expect(
        (await client.api("GET", "/api/v1/health", { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      expect(
        (await client.api("GET", "/api/v1/health", { headers: { authorization: `ApiKey ${token}` } })).status,
      ).toBe(200);
    } finally {
      await client.close();
      await handle.close();
    }
    expect(logs.join("\n")).not.toContain("s3cret");
  });
});

describe("sandboxes", () => {
  it("creates default on first use, with a private workspace", async () => {
    backend = await startTestBackend();
    expect((await backend.api("GET", "/api/v1/sandboxes")).json).toEqual({ sandboxes: [] });
    const res = await backend.api("GET", "/api/v1/sandbox/default");
    expect(res.status).toBe(200);
    const workspace = path.join(backend.dataDir, "sandboxes", res.json.sandbox_id, "workspace");
    expect(res.json).toEqual({
      sandbox_id: expect.stringMatching(/^sbx_[0-9a-hjkmnp-tv-z]{16}$/),
      name: "default",
      status: "ready",
      isolation: BWRAP.available ? "bwrap" : "none",
      network: !BWRAP.available,
      network_mode: BWRAP.available ? "none" : "host",
      workspace: "/workspace",
      created_at: expect.any(String),
      host_workspace: workspace,
      workspace_bytes: null,
      workspace_files: null,
      driver: expect.objectContaining({ isolation: BWRAP.available ? "bwrap" : "none", available: true }),
      limits: DEFAULT_LIMITS,
      limit_status: LIMIT_NAMES.map((limit) => expect.objectContaining({ limit })),
      network_status: { available: true, reason: null },
      // Its root is the host's, not an image's.
      image: null,
      labels: {},
      // No idle stop: none set for it, and the daemon's default is off.
      idle_timeout_ms: null,
      idle: { awake: [], from: "daemon", last_stop: null, stops_at: null, timeout_ms: null },
      published: [],
      volumes: [],
      // Nothing has run in it yet: no environment (none has no environment of its own).
      environment: BWRAP.available ? { state: "stopped", started_at: null, init_pid: null, processes: 0 } : null,
    });
    expect(fs.statSync(workspace).mode & 0o777).toBe(0o700);
    const byId = await backend.api("GET", `/api/v1/sandbox/${res.json.sandbox_id}`);
    expect(byId.json).toEqual(res.json);
    expect((await backend.api("GET", "/api/v1/sandboxes")).json.sandboxes).toHaveLength(1);
  });

  it("creates, refuses duplicates and bad names, and deletes", async () => {
    backend = await startTestBackend();
    const created = await backend.api("POST", "/api/v1/sandbox/create", { body: { name: "ci-1" } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      name: "ci-1",
      isolation: BWRAP.available ? "bwrap" : "none",
      status: "ready",
    });

    const dup = await backend.api("POST", "/api/v1/sandbox/create", { body: { name: "ci-1" } });
    expect(dup.status).toBe(409);
    expect(dup.json.error.code).toBe("sandbox_exists");

    for (const [body, field] of [
      [{ name: "../x" }, "name"],
      [{ name: "create" }, "name"],
      [{ name: "sbx_abc" }, "name"],
      [{ isolation: "vm" }, "isolation"],
      [{ network: "no" }, "network"],
      [[1], "body"],
    ] as const) {
      const res = await backend.api("POST", "/api/v1/sandbox/create", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field } });
    }

    const unnamed = await backend.api("POST", "/api/v1/sandbox/create", { raw: "" });
    expect(unnamed.status).toBe(201);
    expect(unnamed.json.name).toBe(unnamed.json.sandbox_id);

    const dir = path.join(backend.dataDir, "sandboxes", created.json.sandbox_id);
    expect(fs.existsSync(dir)).toBe(true);
    const del = await backend.api("DELETE", "/api/v1/sandbox/ci-1");
    expect(del.status).toBe(200);
    expect(del.json).toMatchObject({ sandbox_id: created.json.sandbox_id, status: "deleted" });
    expect(fs.existsSync(dir)).toBe(false);
    expect((await backend.api("GET", "/api/v1/sandbox/ci-1")).json.error.code).toBe("sandbox_not_found");
    expect((await backend.api("DELETE", "/api/v1/sandbox/ci-1")).status).toBe(404);
    // Deleting default does not create it first.
    expect((await backend.api("DELETE", "/api/v1/sandbox/default")).status).toBe(404);
  });
});

describe("errors", () => {
  it("answers unknown routes, wrong methods, bad JSON and oversized bodies in the error shape", async () => {
    backend = await startTestBackend({ maxBodyBytes: 1024 });
    const unknown = await backend.api("GET", "/api/v1/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ error: { code: "not_found", message: "no route GET /api/v1/nope", details: {} } });
    expect((await backend.api("GET", "/elsewhere")).json.error.code).toBe("not_found");

    const method = await backend.api("PUT", "/api/v1/health");
    expect(method.status).toBe(405);
    expect(method.headers.allow).toBe("GET");

    const badJson = await backend.api("POST", "/api/v1/sandbox/default/execute", { raw: "{nope" });
    expect(badJson.status).toBe(400);
    expect(badJson.json.error).toMatchObject({ code: "invalid_request", details: { field: "body" } });

    const big = await backend.api("POST", "/api/v1/sandbox/create", { raw: "x".repeat(4096) });
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe("payload_too_large");

    // A chunked body (no Content-Length) over the limit: 413, and the server keeps serving.
    const socketPath = backend.socketPath;
    const agent = new Agent({ connect: { socketPath } });
    async function* chunks() {
      for (let i = 0; i < 8; i++) yield Buffer.alloc(512, 0x61);
    }
    const chunked = await request("http://localhost/api/v1/sandbox/create", {
      method: "POST",
      body: Readable.from(chunks()),
      dispatcher: agent,
    });
    expect(chunked.statusCode).toBe(413);
    await chunked.body.dump();
    await agent.close();
    expect((await backend.api("GET", "/api/v1/health")).status).toBe(200);

    const badRef = await backend.api("GET", "/api/v1/sandbox/..%2Fetc");
    expect(badRef.status).toBe(400);
    expect(badRef.json.error.details.field).toBe("sandbox");
  });
});

describe("one backend per data directory", () => {
  it("refuses a second backend on the same data directory and socket, leaving the first one's work running", async () => {
    backend = await startTestBackend();
    const first = backend;
    const token = uniqueSleep(60);
    const exec = first.api("POST", "/api/v1/sandbox/default/execute", { body: { command: `sleep ${token}` } });
    const id = await until(
      async () =>
        (await first.api("GET", "/api/v1/sandbox/default/executions?outcome=pending")).json.executions[0]?.execution_id,
      5000,
      "the execution to start",
    );
    // Its command runs (not only admitted: a cancel while bwrap still sets the sandbox up is another matter).
    await until(() => processesWithArg(token).length === 1, 10_000, "the command to run");

    const same = { dataDir: first.dataDir, socketPath: first.socketPath };
    await expect(startBackend(same)).rejects.toMatchObject({ code: "daemon_already_running" });
    // Another socket does not make the data directory free.
    const other = { dataDir: first.dataDir, socketPath: path.join(tempDir(), "other.sock") };
    await expect(startBackend(other)).rejects.toMatchObject({ code: "daemon_already_running" });
    expect(fs.existsSync(other.socketPath)).toBe(false);

    // The first backend still serves, and its execution still runs (both refused starts
    // have settled: whatever they took, they released before rejecting).
    const now = await first.api("GET", `/api/v1/sandbox/default/executions/${id}`);
    expect(now.status).toBe(200);
    expect(now.json.outcome).toBe("pending");
    expect(processesWithArg(token)).toHaveLength(1);
    await first.api("POST", `/api/v1/sandbox/default/executions/${id}/cancel`, { body: {} });
    expect((await exec).json.outcome).toBe("cancelled");
    expect(processesWithArg(token)).toEqual([]);
  });

  it("keeps its lock inside the private data directory: a name another user can bind first does not stop it", async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, "data");
    fs.mkdirSync(dataDir, { mode: 0o700 });
    // What any local user could do before: bind the data directory's predictable abstract socket name.
    const id = createHash("sha256").update(fs.realpathSync(dataDir)).digest("hex").slice(0, 32);
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(`\0sbx-backend-${process.getuid?.() ?? 0}-${id}`, resolve));
    try {
      backend = await startTestBackend({}, dir);
      expect((await backend.api("GET", "/api/v1/health")).status).toBe(200);
      const lockFile = path.join(dataDir, "daemon.lock");
      expect(fs.statSync(lockFile).mode & 0o777).toBe(0o600);
      // The lock is held: a second backend on the directory is still refused.
      await expect(startBackend({ dataDir, socketPath: path.join(tempDir(), "b.sock") })).rejects.toMatchObject({
        code: "daemon_already_running",
      });
      await backend.stop();
      // Released with the backend: the directory is free again.
      backend = await startTestBackend({}, dir);
      expect((await backend.api("GET", "/api/v1/health")).status).toBe(200);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  it("removes only the socket file it bound when closed", async () => {
    backend = await startTestBackend();
    // Someone else's socket now sits at the path (ours moved away, so its inode is not reused).
    fs.renameSync(backend.socketPath, `${backend.socketPath}.moved`);
    const { createServer } = await import("node:net");
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(backend!.socketPath, resolve));
    await backend.stop();
    expect(fs.lstatSync(backend.socketPath).isSocket()).toBe(true);
    await new Promise<void>((resolve) => other.close(() => resolve()));
  });
});
