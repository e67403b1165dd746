import { describe, expect, it } from "vitest";
import {
  describeIsolations,
  EXECUTE,
  processesWithArg,
  sharedBackend,
  type TestBackend,
  uniqueSleep,
  until,
} from "./support.js";
import { executionPath, SseConnection } from "./stream-support.js";

describeIsolations("cancel", (isolation) => {
  let b: TestBackend;
  sharedBackend(
    (backend) => {
      b = backend;
    },
    { killGraceMs: 300 },
    isolation,
  );

  /**
   * Starts a blocking execute of `command` (where SLEEP stands for a sleep duration
   * unique to this call) and waits until that sleep runs. An hour: an answer that came
   * from the sleeps ending by themselves would come long after the test's own timeout.
   */
  async function startRunning(command: string): Promise<{ answer: Promise<unknown>; id: string; sleep: string }> {
    const sleep = uniqueSleep(3600);
    const answer = b.api("POST", EXECUTE, { body: { command: command.replaceAll("SLEEP", `sleep ${sleep}`) } });
    await until(() => processesWithArg(sleep).length > 0, 5000, "sleep to start");
    const list = (await b.api("GET", "/api/v1/sandbox/default/executions?outcome=pending")).json;
    const id = list.executions.find((e: { command: string }) => e.command.includes(sleep)).execution_id;
    return { answer, id, sleep };
  }

  const cancel = (id: string, body: unknown = {}, headers?: Record<string, string>) =>
    b.api("POST", executionPath(id, "/cancel"), { body, ...(headers && { headers }) });

  describe("POST …/executions/{eid}/cancel", () => {
    it("ends a sleep 60 as cancelled within seconds, once its process group is gone", async () => {
      const { answer, id, sleep } = await startRunning("SLEEP & SLEEP; wait");
      const res = await cancel(id, { reason: "test" });
      expect(res.status).toBe(202);
      expect(res.json).toEqual({ execution_id: id, cancel: "requested", cancellable: "hard" });
      // The acknowledgement is not the outcome.
      expect((await b.api("GET", executionPath(id))).json).toMatchObject({ cancel_requested: true });

      const record = (await answer) as { json: Record<string, unknown> };
      expect(record.json).toMatchObject({
        execution_id: id,
        outcome: "cancelled",
        exit_code: null,
        signal: "SIGTERM",
        cancel_requested: true,
        system_error: null,
      });
      expect(processesWithArg(sleep)).toEqual([]);
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
            usage: expect.objectContaining({ measured_by: expect.any(String) }),
          },
        ],
        ["end", { state: "complete" }],
      ]);
      expect(b.logs).toContain(`execution ${id}: cancel requested ("test")`);
    });

    it("sends KILL after the grace to a group that ignores TERM", async () => {
      const { answer, id, sleep } = await startRunning("trap '' TERM; SLEEP & wait");
      expect((await cancel(id)).json.cancel).toBe("requested");
      const record = (await answer) as { json: Record<string, unknown> };
      expect(record.json).toMatchObject({ outcome: "cancelled", signal: "SIGKILL" });
      expect(processesWithArg(sleep)).toEqual([]);
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
      expect(res.json).toEqual({
        execution_id: done.json.execution_id,
        cancel: "already_terminal",
        cancellable: "hard",
      });
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
      const { answer, id } = await startRunning("SLEEP");
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
});
