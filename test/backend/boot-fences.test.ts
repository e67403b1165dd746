// Boot fences (docs/protocol.md, "Ownership fences"): every run records the backend boot
// it was started in; cancel, signal, stdin and stop issued in another boot (`?boot=B`)
// are refused with 409 stale_handle naming the current boot, and nothing reaches the
// run. An execution's own boot stays its own after a restart; a process started again
// by a restarted backend runs in the new boot.

import { describe, expect, it } from "vitest";
import {
  backendsPerTest,
  EXECUTE,
  groupAlive,
  processesWithArg,
  type TestBackend,
  uniqueSleep,
  until,
} from "./support.js";
import { executionPath } from "./stream-support.js";

const PROCESSES = "/api/v1/sandbox/default/processes";

const started = backendsPerTest("none");

const bootOf = async (b: TestBackend): Promise<string> => (await b.api("GET", "/api/v1/health")).json.boot;

describe("boot fences", () => {
  it("a process started again by a restarted backend refuses the old boot's handle; nothing reaches it", async () => {
    const first = await started();
    const oldBoot = await bootOf(first);
    expect(oldBoot).toMatch(/^boot_[0-9a-f]{16}$/);
    const p = (
      await first.api("POST", PROCESSES, { body: { command: "exec cat", stdin: true, restart: { policy: "always" } } })
    ).json;
    expect(p).toMatchObject({ state: "running", restarts: 0, boot: oldBoot });
    // The current boot's handle is accepted.
    const fed = await first.api("POST", `${PROCESSES}/${p.process_id}/stdin?boot=${oldBoot}`, {
      body: { data: Buffer.from("x").toString("base64") },
    });
    expect(fed.status).toBe(200);

    // As `sbx daemon stop` and a start again: `always` starts again, as run 1 of the new boot.
    await first.stop();
    const second = await started({}, first.dir);
    const newBoot = await bootOf(second);
    expect(newBoot).not.toBe(oldBoot);
    const again = await until(async () => {
      const r = (await second.api("GET", `${PROCESSES}/${p.process_id}`)).json;
      return r.state === "running" && r.os_pid !== null ? r : undefined;
    });
    expect(again).toMatchObject({ restarts: 1, boot: newBoot });

    for (const [method, suffix, opts] of [
      ["POST", "/signal", { body: { signal: "KILL" } }],
      ["POST", "/stdin", { body: { data: Buffer.from("x").toString("base64"), eof: true } }],
      ["DELETE", "", {}],
    ] as const) {
      const refused = await second.api(method, `${PROCESSES}/${p.process_id}${suffix}?boot=${oldBoot}`, opts);
      expect(refused.status, `${method} ${suffix}`).toBe(409);
      expect(refused.json.error).toEqual({
        code: "stale_handle",
        message: `${p.process_id} names ${oldBoot}, but the process's current run (run 1) was started in ${newBoot}; nothing was done`,
        details: { process_id: p.process_id, boot: oldBoot, current_run: 1, current_boot: newBoot },
      });
      const now = (await second.api("GET", `${PROCESSES}/${p.process_id}`)).json;
      expect(now).toMatchObject({ state: "running", restarts: 1, os_pid: again.os_pid, stdin_enabled: true });
      expect(groupAlive(again.os_pid)).toBe(true);
    }
    // A run named with a boot is checked on both: the current run of the old boot is still stale.
    const both = await second.api("POST", `${PROCESSES}/${p.process_id}/signal?run=1&boot=${oldBoot}`, {
      body: { signal: "KILL" },
    });
    expect(both.json.error.details).toEqual({
      process_id: p.process_id,
      run: 1,
      boot: oldBoot,
      current_run: 1,
      current_boot: newBoot,
    });
    // Without a boot it acts, as it always did; with the new boot too.
    const written = await second.api("POST", `${PROCESSES}/${p.process_id}/stdin`, {
      body: { data: Buffer.from("y").toString("base64") },
    });
    expect(written.json).toMatchObject({ generation: 1, bytes_written: 1 });
    const stopped = await second.api("DELETE", `${PROCESSES}/${p.process_id}?boot=${newBoot}&grace_ms=1000`);
    expect(stopped.status).toBe(200);
    expect(stopped.json).toMatchObject({ state: "exited", end_reason: "stopped", boot: newBoot });
  });

  it("an execution's own boot stays its own after a restart; another boot's handle is refused, running or ended", async () => {
    const first = await started();
    const oldBoot = await bootOf(first);
    const done = (await first.api("POST", EXECUTE, { body: { command: ["true"] } })).json;
    expect(done).toMatchObject({ outcome: "succeeded", boot: oldBoot });
    await first.stop();
    const second = await started({}, first.dir);
    const newBoot = await bootOf(second);

    // Its record kept its boot: the handle it gave is still its own (nothing runs to reach).
    expect((await second.api("GET", executionPath(done.execution_id))).json.boot).toBe(oldBoot);
    const own = await second.api("POST", `${executionPath(done.execution_id, "/cancel")}?boot=${oldBoot}`, {
      body: {},
    });
    expect(own.status).toBe(202);
    expect(own.json.cancel).toBe("already_terminal");
    const other = await second.api("POST", `${executionPath(done.execution_id, "/cancel")}?boot=${newBoot}`, {
      body: {},
    });
    expect(other.status).toBe(409);
    expect(other.json.error).toEqual({
      code: "stale_handle",
      message: `${done.execution_id} names ${newBoot}, but the execution ran in ${oldBoot}; nothing was done`,
      details: { execution_id: done.execution_id, boot: newBoot, current_boot: oldBoot },
    });

    // A running one: the refusal leaves it running; its own boot cancels it.
    const sleep = uniqueSleep(3600);
    const answer = second.api("POST", EXECUTE, { body: { command: ["sleep", sleep] } });
    await until(() => processesWithArg(sleep).length > 0, 5000, "sleep to start");
    const running = (await second.api("GET", "/api/v1/sandbox/default/executions?outcome=pending")).json.executions[0];
    expect(running.boot).toBe(newBoot);
    const refused = await second.api("POST", `${executionPath(running.execution_id, "/cancel")}?boot=${oldBoot}`, {
      body: {},
    });
    expect(refused.status).toBe(409);
    expect((await second.api("GET", executionPath(running.execution_id))).json).toMatchObject({
      outcome: "pending",
      cancel_requested: false,
    });
    expect(processesWithArg(sleep).length).toBeGreaterThan(0);
    const cancelled = await second.api("POST", `${executionPath(running.execution_id, "/cancel")}?boot=${newBoot}`, {
      body: {},
    });
    expect(cancelled.json.cancel).toBe("requested");
    expect(((await answer) as { json: { outcome: string } }).json.outcome).toBe("cancelled");
  });

  it("a boot that is not one is a 400", async () => {
    const b = await started();
    const p = (await b.api("POST", PROCESSES, { body: { command: "sleep 60" } })).json;
    const bad = await b.api("POST", `${PROCESSES}/${p.process_id}/signal?boot=${encodeURIComponent("a b")}`, {
      body: { signal: "TERM" },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details).toEqual({ field: "boot" });
    expect((await b.api("GET", `${PROCESSES}/${p.process_id}`)).json.state).toBe("running");
  });
});
