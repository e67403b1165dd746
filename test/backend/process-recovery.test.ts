import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ProcessStore } from "../../src/backend/processes/store.js";
import { BackendStore } from "../../src/backend/store/db.js";
import {
  backendsPerTest,
  groupAlive,
  processesWithArg,
  type TestBackend,
  uniqueSleep,
  until,
  workspaceOf,
} from "./support.js";

const PROCESSES = "/api/v1/sandbox/default/processes";

const started = backendsPerTest();

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
async function start(b: TestBackend, body: unknown): Promise<any> {
  const res = await b.api("POST", PROCESSES, { body });
  expect(res.status, res.text).toBe(201);
  return res.json;
}

async function stdoutOf(b: TestBackend, pid: string, wantBytes: number): Promise<string> {
  const found = await until(async () => {
    const res = await b.api("GET", `${PROCESSES}/${pid}/logs?offset=0`);
    const text = Buffer.from(res.json.data, "base64").toString();
    return text.length >= wantBytes ? text : undefined;
  });
  return found!;
}

describe("restart recovery", () => {
  it("marks what was running as unknown, ends its groups, and starts `always` processes as a new generation", async () => {
    const first = await started();
    const lost = await start(first, { command: "echo before; sleep 60" });
    const always = await start(first, {
      command: 'echo "gen $SBX_PROCESS_GENERATION"; sleep 60',
      restart: { policy: "always" },
    });
    await stdoutOf(first, lost.process_id, 7);
    await stdoutOf(first, always.process_id, 6);
    await first.stop({ simulateCrash: true });
    expect(groupAlive(lost.os_pid)).toBe(true);
    expect(groupAlive(always.os_pid)).toBe(true);

    const second = await started({}, first.dir);
    await until(() => !groupAlive(lost.os_pid) && !groupAlive(always.os_pid), 3000, "the lost groups to be ended");
    const gone = (await second.api("GET", `${PROCESSES}/${lost.process_id}`)).json;
    expect(gone).toMatchObject({
      state: "exited",
      outcome: "unknown",
      end_reason: "backend_lost",
      exit_code: null,
      signal: null,
      os_pid: null,
      last_run: { generation: 0, outcome: "unknown", exit_code: null, signal: null },
    });
    const result = (await second.api("GET", `${PROCESSES}/${lost.process_id}/result`)).json;
    expect(result).toMatchObject({ outcome: "unknown", complete: true, stdout_tail: "before\n" });

    const again = (await second.api("GET", `${PROCESSES}/${always.process_id}`)).json;
    expect(again).toMatchObject({
      state: "running",
      outcome: "pending",
      restarts: 1,
      last_run: { generation: 0, outcome: "unknown" },
    });
    expect(again.os_pid).not.toBe(always.os_pid);
    // Offsets go on over the daemon's restart: generation 0's output, then generation 1's.
    expect(await stdoutOf(second, always.process_id, 12)).toBe("gen 0\ngen 1\n");
    const chunk = (await second.api("GET", `${PROCESSES}/${always.process_id}/logs?offset=6`)).json;
    expect(chunk).toMatchObject({ offset: 6, next_offset: 12, generation: 1, eof: false });
    expect(gone.recovery).toBe(`process group ${lost.os_pid} was still running; killed`);
    expect(second.logs).toContain("recovery: 2 process(es) lost by an earlier run");
    expect(second.logs).toContain("recovery: 1 process(es) started again");
  });

  it("a graceful close ends processes as cancelled/backend_shutdown; `always` ones start again with the daemon", async () => {
    const first = await started();
    const always = await start(first, { command: "echo up; sleep 60", restart: { policy: "always" } });
    const once = await start(first, { command: "sleep 60", restart: { policy: "on-failure" } });
    await stdoutOf(first, always.process_id, 3);
    await first.stop();
    expect(groupAlive(always.os_pid)).toBe(false);
    expect(groupAlive(once.os_pid)).toBe(false);

    const store = new BackendStore(path.join(first.dataDir, "backend.db"));
    const processes = new ProcessStore(store);
    const rows = [processes.getProcess(always.process_id)!, processes.getProcess(once.process_id)!];
    store.close();
    for (const row of rows) {
      expect(row).toMatchObject({
        state: "exited",
        outcome: "cancelled",
        end_reason: "backend_shutdown",
        signal: "SIGTERM",
        exit_code: null,
      });
    }

    const second = await started({}, first.dir);
    expect((await second.api("GET", `${PROCESSES}/${always.process_id}`)).json).toMatchObject({
      state: "running",
      outcome: "pending",
      end_reason: null,
      ended_at: null,
      restarts: 1,
    });
    expect((await second.api("GET", `${PROCESSES}/${once.process_id}`)).json).toMatchObject({
      state: "exited",
      outcome: "cancelled",
      end_reason: "backend_shutdown",
    });
    expect(await stdoutOf(second, always.process_id, 6)).toBe("up\nup\n");
  });

  it("leaves alone a recorded group from another boot (or with no boot id), and says so in the record", async () => {
    const first = await started();
    const [a, c] = [uniqueSleep(), uniqueSleep()];
    const otherBoot = await start(first, { command: ["sleep", a] });
    const noBootId = await start(first, { command: ["sleep", c] });
    await until(() => processesWithArg(a).length === 1 && processesWithArg(c).length === 1, 5000, "both to run");
    await first.stop({ simulateCrash: true });
    // As if these groups had been recorded before a reboot: their numbers may be anyone's now.
    const store = new BackendStore(path.join(first.dataDir, "backend.db"));
    const processes = new ProcessStore(store);
    store.transaction(() => {
      processes.updateProcess(otherBoot.process_id, { boot_id: "00000000-0000-0000-0000-000000000000" });
      processes.updateProcess(noBootId.process_id, { boot_id: null });
    });
    store.close();

    const second = await started({}, first.dir);
    const records = await Promise.all(
      [otherBoot, noBootId].map(async (p) => (await second.api("GET", `${PROCESSES}/${p.process_id}`)).json),
    );
    expect(records[0]).toMatchObject({ state: "exited", outcome: "unknown", end_reason: "backend_lost" });
    expect(records[0].recovery).toBe(
      `process group ${otherBoot.os_pid} was started in another boot (00000000-0000-0000-0000-000000000000); left alone`,
    );
    expect(records[1].recovery).toMatch(/was recorded without a boot id; left alone/);
    // Not signalled: both still run (the test ends them itself).
    expect(processesWithArg(a)).toHaveLength(1);
    expect(processesWithArg(c)).toHaveLength(1);
    for (const p of [otherBoot, noBootId]) process.kill(-p.os_pid, "SIGKILL");
    await until(() => processesWithArg(a).length + processesWithArg(c).length === 0, 5000, "the test's cleanup");
  });

  it("never starts a process again once it was stopped", async () => {
    const first = await started();
    const p = await start(first, { command: "sleep 60", restart: { policy: "always" } });
    await first.api("DELETE", `${PROCESSES}/${p.process_id}?grace_ms=0`);
    await first.stop({ simulateCrash: true });
    const second = await started({}, first.dir);
    expect((await second.api("GET", `${PROCESSES}/${p.process_id}`)).json).toMatchObject({
      state: "exited",
      outcome: "cancelled",
      end_reason: "stopped",
    });
  });
});

describe("the daemon around supervised processes", () => {
  it("does not go idle while a process runs or waits in back-off", async () => {
    const idles: number[] = [];
    const b = await started({ idleExitMs: 200, onIdle: () => idles.push(Date.now()) });
    const ends = path.join(await workspaceOf(b), "ends");
    // Nothing runs yet: the backend goes idle once a quiet period passed without a request
    // (as it may between any two requests of a slow client). Waited for first, so that
    // such an idleness before the start is never taken for one during the runs; until a
    // request ends, nothing arms the timer again.
    await until(() => idles.length > 0, 10_000, "onIdle before the process starts");
    const before = idles.length;
    // Two runs of 300 ms with a back-off of 800 ms between, each longer than the quiet
    // period; each run writes when it ends (ns since the epoch) as the last thing it does.
    const p = await start(b, {
      command: "sleep 0.3; date +%s%N >> ends; exit 1",
      restart: { policy: "on-failure", max_restarts: 1, backoff_ms: 800 },
    });
    // Requests re-arm the timer too: the file system says when the runs ended, without any.
    const endsMs = await until(
      () => {
        const text = fs.existsSync(ends) ? fs.readFileSync(ends, "utf8") : "";
        const stamps = text.split("\n").filter((l) => /^\d+$/.test(l));
        return stamps.length === 2 && text.endsWith("\n")
          ? stamps.map((ns) => Number(BigInt(ns) / 1_000_000n))
          : undefined;
      },
      10_000,
      "both runs to end",
    );
    // The back-off came between them (and the second run's 300 ms).
    expect(endsMs[1]! - endsMs[0]!).toBeGreaterThanOrEqual(1000);
    await until(() => idles.length > before, 3000, "onIdle after the runs");
    // Neither while a run ran nor while it waited in back-off: each idleness since the
    // start came a quiet period after the last end.
    const lastEnd = fs.statSync(ends).mtimeMs;
    for (const at of idles.slice(before)) expect(at - lastEnd).toBeGreaterThanOrEqual(150);
    expect((await b.api("GET", `${PROCESSES}/${p.process_id}`)).json).toMatchObject({ state: "exited", restarts: 1 });
  });

  it("rotates process logs at the limits it was started with", async () => {
    const b = await started({ processLogSegmentBytes: 1000, processLogKeepBytes: 3000 });
    const p = await start(b, { command: ["seq", "1", "10000"] });
    const expected = Array.from({ length: 10000 }, (_, i) => `${i + 1}\n`).join("");
    const r = (await b.api("GET", `${PROCESSES}/${p.process_id}/result?wait_ms=10000`)).json;
    const oldest = r.output_capture.stdout.oldest_offset;
    expect(r.output_capture.stdout).toEqual({ bytes: expected.length, oldest_offset: oldest, rotated: true });
    // Whole segments of 1000 bytes; at most 3000 kept, more than 2000.
    expect(oldest % 1000).toBe(0);
    expect(expected.length - oldest).toBeLessThanOrEqual(3000);
    expect(expected.length - oldest).toBeGreaterThan(2000);
    const dir = path.join(b.dataDir, "sandboxes", p.sandbox_id, "processes", p.process_id);
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.startsWith("stdout."))
      .sort((x, y) => x.length - y.length || x.localeCompare(y));
    expect(files[0]).toBe(`stdout.${oldest}.log`);
    expect(files.every((f) => fs.statSync(path.join(dir, f)).size <= 1000)).toBe(true);

    const first = (await b.api("GET", `${PROCESSES}/${p.process_id}/logs?offset=0&limit=500`)).json;
    expect(first).toMatchObject({ offset: oldest, rotated: true, oldest_offset: oldest, next_offset: oldest + 500 });
    const rest = (await b.api("GET", `${PROCESSES}/${p.process_id}/logs?offset=${first.next_offset}`)).json;
    expect(rest).toMatchObject({ rotated: false, eof: true, next_offset: expected.length });
    const read = Buffer.concat([Buffer.from(first.data, "base64"), Buffer.from(rest.data, "base64")]).toString();
    expect(read).toBe(expected.slice(oldest));
  });

  it("refuses to delete a sandbox while one of its processes runs", async () => {
    const b = await started();
    const sandbox = (await b.api("POST", "/api/v1/sandbox/create", { body: { name: "busy" } })).json;
    const base = `/api/v1/sandbox/busy/processes`;
    const p = (await b.api("POST", base, { body: { command: ["sleep", "60"] } })).json;
    const refused = await b.api("DELETE", "/api/v1/sandbox/busy");
    expect([refused.status, refused.json.error.code]).toEqual([409, "sandbox_busy"]);
    await b.api("DELETE", `${base}/${p.process_id}?grace_ms=0`);
    expect((await b.api("DELETE", "/api/v1/sandbox/busy")).status).toBe(200);
    expect(fs.existsSync(path.join(b.dataDir, "sandboxes", sandbox.sandbox_id))).toBe(false);
  });
});
