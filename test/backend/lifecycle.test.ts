import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runDaemon } from "../../src/backend/daemon.js";
import type { BackendHandle } from "../../src/backend/backend.js";
import {
  backendsPerTest,
  EXECUTE,
  processesWithArg,
  socketClient,
  tempDir,
  uniqueSleep,
  until,
  workspaceOf,
} from "./support.js";

const started = backendsPerTest();

describe("restart recovery", () => {
  it("marks executions an earlier run left pending as lost and ends their process groups", async () => {
    const first = await started({ faults: "execute:drop" });
    const sleep = uniqueSleep(60);
    await expect(
      first.api("POST", EXECUTE, {
        body: { command: `sleep ${sleep} & sleep ${sleep}; wait` },
        headers: { "idempotency-key": "crash-1" },
      }),
    ).rejects.toThrow();
    await until(() => processesWithArg(sleep).length === 2, 5000, "the group to run");
    await first.stop({ simulateCrash: true });
    expect(processesWithArg(sleep)).toHaveLength(2);

    const second = await started({}, first.dir);
    await until(() => processesWithArg(sleep).length === 0, 3000, "the lost group to be ended");
    const list = await second.api("GET", "/api/v1/sandbox/default/executions?idempotency_key=crash-1");
    expect(list.json.live_count).toBe(0);
    expect(list.json.executions).toHaveLength(1);
    expect(list.json.executions[0]).toMatchObject({
      outcome: "unknown",
      system_error: "exec_stream_lost",
      exit_code: null,
      signal: null,
      recovery: expect.stringMatching(/^process group \d+ was still running; killed$/),
    });
    expect(second.logs).toContain("recovery: 1 execution(s) lost by an earlier run");
  });

  it("publishes records whose publication was pending", async () => {
    const first = await started({ faults: "execute:record_pending", recordPendingPublishMs: 60_000 });
    const res = await first.api("POST", EXECUTE, { body: { command: "true" } });
    expect(res.json.record_pending).toBe(true);
    await first.stop({ simulateCrash: true });
    const second = await started({}, first.dir);
    const record = await second.api("GET", `/api/v1/sandbox/default/executions/${res.json.execution_id}`);
    expect(record.json).toMatchObject({ outcome: "succeeded", record_pending: false });
  });
});

describe("graceful close", () => {
  it("ends running groups, answers their requests, and marks them", async () => {
    const b = await started();
    const sleep = uniqueSleep(60);
    const pending = b.api("POST", EXECUTE, { body: { command: `sleep ${sleep}` } });
    await until(() => processesWithArg(sleep).length === 1, 5000, "sleep to start");
    await b.stop();
    const answer = await pending;
    expect(answer.json).toMatchObject({ outcome: "cancelled", system_error: "backend_shutdown", signal: "SIGTERM" });
    expect(processesWithArg(sleep)).toEqual([]);
    const again = await started({}, b.dir);
    const record = await again.api("GET", `/api/v1/sandbox/default/executions/${answer.json.execution_id}`);
    expect(record.json.outcome).toBe("cancelled");
  });

  it("calls onIdle only after a quiet period with nothing running", async () => {
    const idles: number[] = [];
    const b = await started({ idleExitMs: 300, onIdle: () => idles.push(Date.now()) });
    const ran = path.join(await workspaceOf(b), "ran");
    // Idle before anything runs (a slow client may leave the quiet period between two
    // requests): waited for first, so that it is never taken for one during the run.
    await until(() => idles.length > 0, 10_000, "onIdle before the run");
    const before = idles.length;
    // It runs longer than the quiet period, and writes `ran` as the last thing it does.
    const res = await b.api("POST", EXECUTE, { body: { command: "sleep 0.5; touch ran" } });
    expect(res.json.outcome).toBe("succeeded");
    await until(() => idles.length > before, 3000, "onIdle after the run");
    // Not while it ran: a quiet period (300 ms) after its end.
    for (const at of idles.slice(before)) expect(at - fs.statSync(ran).mtimeMs).toBeGreaterThanOrEqual(250);
  });
});

describe("runDaemon", () => {
  function daemonIn(dir: string, extra: Partial<Parameters<typeof runDaemon>[0]> = {}) {
    const stop = new AbortController();
    const logs: string[] = [];
    let ready!: (h: BackendHandle) => void;
    const readyP = new Promise<BackendHandle>((r) => {
      ready = r;
    });
    const done = runDaemon({
      dataDir: path.join(dir, "data"),
      socketPath: path.join(dir, "run", "sbx.sock"),
      handleSignals: false,
      signal: stop.signal,
      log: (l) => logs.push(l),
      onReady: ready,
      ...extra,
    });
    return { stop, done, ready: readyP, logs, pidFile: path.join(dir, "data", "daemon.pid") };
  }

  it("writes a pid file, refuses a second daemon, and cleans up when stopped", async () => {
    const dir = tempDir();
    const d = daemonIn(dir);
    const handle = await d.ready;
    expect(fs.readFileSync(d.pidFile, "utf8")).toBe(`${process.pid}\n`);
    const client = socketClient(handle.socketPath!);
    expect((await client.api("GET", "/api/v1/health")).status).toBe(200);
    await client.close();

    await expect(daemonIn(dir).done).rejects.toMatchObject({ code: "daemon_already_running" });
    expect(fs.existsSync(d.pidFile)).toBe(true);

    d.stop.abort();
    await d.done;
    expect(fs.existsSync(d.pidFile)).toBe(false);
    expect(fs.existsSync(handle.socketPath!)).toBe(false);
    expect(d.logs).toContain("stopping: stop requested");
  });

  it("stops gracefully on SIGTERM", async () => {
    const before = process.listeners("SIGTERM");
    const d = daemonIn(tempDir(), { handleSignals: true });
    await d.ready;
    const added = process.listeners("SIGTERM").filter((l) => !before.includes(l));
    expect(added).toHaveLength(1);
    // Call the daemon's own handler: a real signal would reach the test runner's handlers too.
    (added[0] as (sig: NodeJS.Signals) => void)("SIGTERM");
    await d.done;
    expect(d.logs).toContain("stopping: SIGTERM");
    expect(process.listeners("SIGTERM")).toEqual(before);
    expect(fs.existsSync(d.pidFile)).toBe(false);
  });

  it("replaces a stale pid file", async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, "data"), { recursive: true });
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
    fs.writeFileSync(path.join(dir, "data", "daemon.pid"), `${dead}\n`);
    const d = daemonIn(dir);
    await d.ready;
    expect(fs.readFileSync(d.pidFile, "utf8")).toBe(`${process.pid}\n`);
    d.stop.abort();
    await d.done;
  });

  it("exits when idle", async () => {
    const d = daemonIn(tempDir(), { idleExitMs: 200 });
    await d.ready;
    await d.done;
    expect(d.logs).toContain("stopping: idle");
    expect(fs.existsSync(d.pidFile)).toBe(false);
  });
});
