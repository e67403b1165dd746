// Ownership fences (docs/protocol.md, "Ownership fences"): signal, stdin and stop
// issued against a run (`?run=N`) are refused with 409 stale_handle while another run
// is current, and nothing reaches the process; the current run's number is accepted.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDefaultSandbox, groupAlive, startTestBackend, type TestBackend, until } from "./support.js";

const PROCESSES = "/api/v1/sandbox/default/processes";

describe("ownership fences", () => {
  let b: TestBackend;
  let id: string;
  let pid: number;
  let boot: string;

  beforeAll(async () => {
    b = await startTestBackend();
    await createDefaultSandbox(b, "none");
    boot = (await b.api("GET", "/api/v1/health")).json.boot;
    // Run 0 fails at once; the policy starts run 1, which keeps running.
    const started = await b.api("POST", PROCESSES, {
      body: {
        command: ["sh", "-c", "if [ -e ran-once ]; then exec cat; fi; touch ran-once; exit 1"],
        stdin: true,
        restart: { policy: "on-failure", backoff_ms: 10 },
      },
    });
    expect(started.status).toBe(201);
    id = started.json.process_id;
    await until(
      async () => {
        const p = (await b.api("GET", `${PROCESSES}/${id}`)).json;
        if (p.state === "running" && p.restarts === 1) pid = p.os_pid;
        return p.state === "running" && p.restarts === 1;
      },
      30_000,
      "run 1 to be running",
    );
  });
  afterAll(() => b.stop());

  it.each([
    ["signal", "POST", "/signal?run=0", { body: { signal: "KILL" } }],
    ["stdin", "POST", "/stdin?run=0", { body: { data: Buffer.from("x").toString("base64") } }],
    ["stop", "DELETE", "?run=0&grace_ms=0", {}],
  ] as const)(
    "%s issued against run 0 is refused while run 1 runs; nothing reaches it",
    async (_n, method, suffix, opts) => {
      const refused = await b.api(method, `${PROCESSES}/${id}${suffix}`, opts);
      expect(refused.status).toBe(409);
      expect(refused.json.error).toEqual({
        code: "stale_handle",
        message: `${id}@0 is not the current run of the process (it is run 1); nothing was done`,
        details: { process_id: id, run: 0, current_run: 1, current_boot: boot },
      });
      const now = (await b.api("GET", `${PROCESSES}/${id}`)).json;
      expect(now).toMatchObject({ state: "running", restarts: 1, os_pid: pid });
      expect(groupAlive(pid)).toBe(true);
    },
  );

  it("the current run's number is accepted", async () => {
    const written = await b.api("POST", `${PROCESSES}/${id}/stdin?run=1`, {
      body: { data: Buffer.from("hello\n").toString("base64") },
    });
    expect(written.status).toBe(200);
    expect(written.json).toMatchObject({ generation: 1, bytes_written: 6 });
    const stopped = await b.api("DELETE", `${PROCESSES}/${id}?run=1&grace_ms=1000`);
    expect(stopped.status).toBe(200);
    expect(stopped.json).toMatchObject({ state: "exited", end_reason: "stopped" });
  });

  it("a run number that is not one is a 400", async () => {
    const bad = await b.api("POST", `${PROCESSES}/${id}/signal?run=x`, { body: { signal: "TERM" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details).toEqual({ field: "run" });
  });
});
