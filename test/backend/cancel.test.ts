import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EXECUTE, groupAlive, groupMembers, sharedBackend, type TestBackend, until } from "./support.js";
import { executionPath, SseConnection } from "./stream-support.js";

let b: TestBackend;
let workspace: string;
sharedBackend(
  (backend, dir) => {
    b = backend;
    workspace = dir;
  },
  { killGraceMs: 300 },
);

/** Starts a blocking execute and waits until it runs and has written its pgid to `file`. */
async function startRunning(
  command: string,
  file: string,
): Promise<{ answer: Promise<unknown>; id: string; pgid: number }> {
  const answer = b.api("POST", EXECUTE, { body: { command: `echo $$ > ${file}; ${command}` } });
  const pgidFile = path.join(workspace, file);
  await until(() => fs.existsSync(pgidFile) && fs.readFileSync(pgidFile, "utf8").endsWith("\n"), 5000, "pgid");
  const pgid = Number(fs.readFileSync(pgidFile, "utf8"));
  const list = (await b.api("GET", "/api/v1/sandbox/default/executions?outcome=pending")).json;
  const id = list.executions.find((e: { command: string }) => e.command.includes(file)).execution_id;
  return { answer, id, pgid };
}

const cancel = (id: string, body: unknown = {}, headers?: Record<string, string>) =>
  b.api("POST", executionPath(id, "/cancel"), { body, ...(headers && { headers }) });

describe("POST …/executions/{eid}/cancel", () => {
  it("ends a sleep 60 as cancelled within seconds, once its process group is gone", async () => {
    const { answer, id, pgid } = await startRunning("sleep 60 & sleep 60; wait", "c1.pgid");
    const asked = Date.now();
    const res = await cancel(id, { reason: "test" });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ execution_id: id, cancel: "requested", cancellable: "hard" });
    // The acknowledgement is not the outcome.
    expect((await b.api("GET", executionPath(id))).json).toMatchObject({ cancel_requested: true });

    const record = (await answer) as { json: Record<string, unknown> };
    expect(Date.now() - asked).toBeLessThan(3000);
    expect(record.json).toMatchObject({
      execution_id: id,
      outcome: "cancelled",
      exit_code: null,
      signal: "SIGTERM",
      cancel_requested: true,
      system_error: null,
    });
    expect(groupAlive(pgid)).toBe(false);
    const events = (await b.api("GET", executionPath(id, "/events"))).json.events;
    expect(events.slice(-2).map((e: { type: string; data: unknown }) => [e.type, e.data])).toEqual([
      [
        "exit",
        {
          outcome: "cancelled",
          exit_code: null,
          signal: "SIGTERM",
          system_error: null,
          record_pending: false,
          finished_at: expect.any(String),
        },
      ],
      ["end", { state: "complete" }],
    ]);
    expect(b.logs).toContain(`execution ${id}: cancel requested ("test")`);
  });

  it("sends KILL after the grace to a group that ignores TERM", async () => {
    const { answer, id, pgid } = await startRunning("trap '' TERM; sleep 60 & wait", "c2.pgid");
    await until(() => groupMembers(pgid).includes("sleep"), 5000, "sleep to start");
    expect((await cancel(id)).json.cancel).toBe("requested");
    const record = (await answer) as { json: Record<string, unknown> };
    expect(record.json).toMatchObject({ outcome: "cancelled", signal: "SIGKILL" });
    expect(groupAlive(pgid)).toBe(false);
  });

  it("ends a streamed execution: its stream carries exit cancelled and end", async () => {
    const conn = await SseConnection.open(b.socketPath, "POST", EXECUTE, {
      body: { command: "printf go; sleep 60", stream: true },
    });
    try {
      await conn.waitFor((c) => c.frames.some((f) => f.event === "output"), 5000, "output");
      const id = conn.frames[0]!.data.execution_id;
      expect((await cancel(id)).status).toBe(202);
      await conn.done();
      expect(conn.frames.slice(-2).map((f) => [f.event, f.data.outcome ?? f.data.state])).toEqual([
        ["exit", "cancelled"],
        ["end", "complete"],
      ]);
    } finally {
      await conn.close();
    }
  });

  it("answers already_terminal for an execution that ended, and 404 for an unknown one", async () => {
    const done = await b.api("POST", EXECUTE, { body: { command: "true" } });
    const res = await cancel(done.json.execution_id);
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ execution_id: done.json.execution_id, cancel: "already_terminal", cancellable: "hard" });
    expect((await b.api("GET", executionPath(done.json.execution_id))).json).toMatchObject({
      outcome: "succeeded",
      cancel_requested: false,
    });
    const missing = await cancel("exe_nope");
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("execution_not_found");
    for (const body of [{ reason: 3 }, { reason: "x".repeat(1001) }, [1]]) {
      const bad = await cancel(done.json.execution_id, body);
      expect(bad.status, JSON.stringify(body).slice(0, 30)).toBe(400);
    }
  });

  it("honours Idempotency-Key: the same key and body replay the first answer", async () => {
    const { answer, id } = await startRunning("sleep 60", "c3.pgid");
    const key = { "idempotency-key": "cancel-1" };
    const first = await cancel(id, { reason: "r" }, key);
    expect(first.json.cancel).toBe("requested");
    await answer;
    const again = await cancel(id, { reason: "r" }, key);
    expect(again.status).toBe(202);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json).toEqual(first.json);
    const reused = await cancel(id, { reason: "other" }, key);
    expect(reused.status).toBe(422);
    expect(reused.json.error.code).toBe("idempotency_key_reused");
  });
});
