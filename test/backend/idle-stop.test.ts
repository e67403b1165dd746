// Idle stop (docs/operations.md, "Idle stop") on a backend whose clock the test moves
// (no sleeping): a bwrap sandbox with nothing running stops after its idle timeout,
// said as last_stop idle; one with a running supervised process, one with a
// `--restart always` process between its runs, and one with a command on an attached
// terminal stay up; the next exec starts a stopped one again; 0 is off.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeNeeding } from "../support/requirements.js";
import { openWebSocket } from "../support/websocket.js";
import { startTestBackend, type TestBackend, until } from "./support.js";

const AT = Date.parse("2030-01-01T00:00:00.000Z");
const MINUTE = 60_000;

describeNeeding(["bwrap", "pty"], "idle stop", () => {
  let b: TestBackend;
  let t = AT;
  beforeAll(async () => {
    b = await startTestBackend({ now: () => t, idleSweepMs: 20, sandboxIdleTimeoutMs: 10 * MINUTE });
  });
  afterAll(async () => {
    await b?.stop();
  });

  const show = async (name: string) => (await b.api("GET", `/api/v1/sandbox/${name}`)).json;
  const state = async (name: string) => (await show(name)).environment.state as string;
  const create = async (name: string, body: Record<string, unknown> = {}) => {
    const res = await b.api("POST", "/api/v1/sandbox/create", { body: { name, isolation: "bwrap", ...body } });
    expect(res.status, res.text).toBe(201);
  };
  const exec = async (name: string, command: string) => {
    const res = await b.api("POST", `/api/v1/sandbox/${name}/execute`, { body: { command } });
    expect(res.status, res.text).toBe(200);
    return res.json;
  };

  it("stops an idle sandbox after its timeout and not one that runs something; the next exec starts it again", async () => {
    // Oldest first: a sweep looks at these before `idle`, so once `idle` stopped they were judged.
    await create("proc", { idle_timeout_ms: MINUTE });
    await create("always", { idle_timeout_ms: MINUTE });
    await create("term", { idle_timeout_ms: MINUTE });
    await create("off", { idle_timeout_ms: 0 });
    await create("idle", { idle_timeout_ms: MINUTE });

    const proc = await b.api("POST", "/api/v1/sandbox/proc/processes", { body: { command: "sleep 600" } });
    expect(proc.status, proc.text).toBe(201);
    const always = await b.api("POST", "/api/v1/sandbox/always/processes", {
      body: { command: "exit 3", restart: { policy: "always", backoff_ms: 3_600_000, max_backoff_ms: 3_600_000 } },
    });
    expect(always.status, always.text).toBe(201);
    void b.api("POST", "/api/v1/sandbox/term/execute", {
      body: { command: ["/bin/sh", "-c", "read line; echo got:$line"], tty: { cols: 80, rows: 24 }, timeout: 600_000 },
      headers: { "idempotency-key": "idle-term" },
    });
    const eid = await until(async () => {
      const list = await b.api("GET", "/api/v1/sandbox/term/executions?idempotency_key=idle-term");
      return list.json.executions[0]?.execution_id as string | undefined;
    });
    const terminal = await openWebSocket(`ws+unix://${b.socketPath}:/api/v1/sandbox/term/executions/${eid}/terminal`);
    await exec("off", "true");
    await exec("idle", "true");
    for (const name of ["proc", "always", "term", "off", "idle"]) expect(await state(name)).toBe("running");

    const idle = await show("idle");
    expect(idle.idle).toEqual({
      timeout_ms: MINUTE,
      from: "sandbox",
      stops_at: new Date(AT + MINUTE).toISOString(),
      awake: [],
      last_stop: null,
    });
    expect((await show("proc")).idle).toMatchObject({ stops_at: null, awake: ["1 supervised process"] });
    expect((await show("term")).idle.awake).toEqual(["1 execution"]);
    expect((await show("off")).idle).toMatchObject({ timeout_ms: null, from: "sandbox", stops_at: null });

    // The `always` process is between its runs (it waits an hour to restart): still awake.
    await until(
      async () =>
        (await b.api("GET", `/api/v1/sandbox/always/processes/${always.json.process_id}`)).json.state !== "running",
    );
    expect((await show("always")).idle.awake).toEqual(["1 supervised process"]);
    t = AT + MINUTE;
    await until(async () => (await state("idle")) === "stopped", 30_000, "the idle sandbox to stop");
    expect((await show("idle")).idle).toMatchObject({
      stops_at: null,
      awake: [],
      last_stop: { at: new Date(AT + MINUTE).toISOString(), reason: "idle" },
    });
    expect(b.logs).toContain("sandbox idle stopped: idle (nothing ran in it for 1m)");
    for (const name of ["proc", "always", "term", "off"]) expect(await state(name), name).toBe("running");
    expect((await show("always")).idle.awake).toEqual(["1 supervised process"]);

    // The next command starts it again, in the same workspace.
    expect((await exec("idle", "echo again > f; cat f")).stdout).toBe("again\n");
    expect(await state("idle")).toBe("running");
    terminal.ws.terminate();
  });

  it("gives a sandbox without its own timeout the daemon's default; an update sets, turns off and resets it", async () => {
    await create("dflt");
    await exec("dflt", "true");
    expect((await show("dflt")).idle).toMatchObject({ timeout_ms: 10 * MINUTE, from: "daemon" });
    const off = await b.api("PATCH", "/api/v1/sandbox/dflt", { body: { idle_timeout_ms: 0 } });
    expect(off.json.idle).toMatchObject({ timeout_ms: null, from: "sandbox", stops_at: null });
    const own = await b.api("PATCH", "/api/v1/sandbox/dflt", { body: { idle_timeout_ms: 5000 } });
    expect(own.json).toMatchObject({ idle_timeout_ms: 5000, idle: { timeout_ms: 5000, from: "sandbox" } });
    const back = await b.api("PATCH", "/api/v1/sandbox/dflt", { body: { idle_timeout_ms: null } });
    expect(back.json).toMatchObject({ idle_timeout_ms: null, idle: { timeout_ms: 10 * MINUTE, from: "daemon" } });
  });
});

// A paused sandbox's pause was asked for: idle stop leaves it (frozen, its processes
// kept) and its idle time starts again when it is resumed.
describeNeeding(["bwrap", "cgroupFreezer"], "idle stop and pause", () => {
  let b: TestBackend;
  let t = AT;
  beforeAll(async () => {
    b = await startTestBackend({ now: () => t, idleSweepMs: 20 });
  });
  afterAll(async () => {
    await b?.stop();
  });

  const show = async (name: string) => (await b.api("GET", `/api/v1/sandbox/${name}`)).json;
  const state = async (name: string) => (await show(name)).environment.state as string;

  it("leaves a paused sandbox alone and counts its idle time again from its resume", async () => {
    // Oldest first: a sweep looks at `frozen` before `witness`, so once `witness` stopped it was judged.
    for (const name of ["frozen", "witness"]) {
      const res = await b.api("POST", "/api/v1/sandbox/create", {
        body: { name, isolation: "bwrap", idle_timeout_ms: MINUTE },
      });
      expect(res.status, res.text).toBe(201);
      expect((await b.api("POST", `/api/v1/sandbox/${name}/execute`, { body: { command: "true" } })).status).toBe(200);
    }
    const paused = await b.api("POST", "/api/v1/sandbox/frozen/pause");
    expect(paused.status, paused.text).toBe(200);
    t = AT + 2 * MINUTE;
    await until(async () => (await state("witness")) === "stopped", 30_000, "the idle witness to stop");
    expect(await state("frozen")).toBe("paused");
    expect((await show("frozen")).idle).toMatchObject({ stops_at: null, last_stop: null });

    expect((await b.api("POST", "/api/v1/sandbox/frozen/resume")).status).toBe(200);
    expect(await state("frozen")).toBe("running");
    expect((await show("frozen")).idle.stops_at).toBe(new Date(t + MINUTE).toISOString());
    expect((await b.api("POST", "/api/v1/sandbox/frozen/stop")).status).toBe(200);
  });
});

describe("idle timeouts on the wire", () => {
  let b: TestBackend;
  beforeAll(async () => {
    b = await startTestBackend();
  });
  afterAll(async () => {
    await b?.stop();
  });

  it.each([999, -1, 1.5, "1m", 366 * 86_400_000])(
    "refuses idle_timeout_ms %j with 400, creating nothing",
    async (v) => {
      const res = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "x", idle_timeout_ms: v } });
      expect(res.status).toBe(400);
      expect(res.json.error.details.field).toBe("idle_timeout_ms");
      expect(res.json.error.message).toContain("idle_timeout_ms must be 0 (off) or milliseconds from 1000");
      expect((await b.api("GET", "/api/v1/sandbox/x")).status).toBe(404);
    },
  );
});
