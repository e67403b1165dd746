// Retention in the embedded backend, on a real backend with an injected clock: by
// age (never sooner than the key window), by size (the oldest finished outputs first,
// records kept), never anything still running; and `sbx daemon status` saying what
// is kept and its size.

import { afterEach, describe, expect, it } from "vitest";
import { type BackendHandle, startBackend } from "../../src/backend/backend.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { resolvePaths } from "../../src/config/paths.js";
import type { StorageReport } from "../../src/protocol/types.js";
import { makeHome, removeHome } from "../support/cli.js";
import { backendsPerTest, EXECUTE, type TestBackend, until } from "./support.js";

const DAY = 24 * 60 * 60 * 1000;
const EXECUTIONS = "/api/v1/sandbox/default/executions";
const start = backendsPerTest();

/** A clock the test moves by hand. */
function manualClock() {
  let now = Date.now();
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

async function run(b: TestBackend, command: string): Promise<string> {
  const r = await b.api("POST", EXECUTE, { body: { command } });
  expect(r.status, r.text).toBe(200);
  return r.json.execution_id;
}

async function storage(b: TestBackend): Promise<StorageReport> {
  const r = await b.api("GET", "/api/v1/storage");
  expect(r.status, r.text).toBe(200);
  return r.json;
}

/** Waits for a sweep that read the clock at `at` (ms). */
async function sweptAt(b: TestBackend, at: number): Promise<StorageReport> {
  return until<StorageReport | undefined>(
    async () => {
      const s = await storage(b);
      return s.last_sweep?.at === new Date(at).toISOString() ? s : undefined;
    },
    10_000,
    "a retention sweep at the new time",
  ) as Promise<StorageReport>;
}

describe("by age", () => {
  it("deletes finished executions and exited processes past --retain, never sooner than the key window, never running ones", async () => {
    const clock = manualClock();
    const b = await start({ now: clock.now, retainMs: 1 * DAY, keyRetentionMs: 3 * DAY, retentionSweepMs: 20 });
    const old = await run(b, "echo old");
    const proc = await b.api("POST", "/api/v1/sandbox/default/processes", { body: { command: "true" } });
    expect(proc.status).toBe(201);
    await until(
      async () =>
        (await b.api("GET", `/api/v1/sandbox/default/processes/${proc.json.process_id}`)).json.state === "exited",
      10_000,
      "the process to exit",
    );
    const running = b.api("POST", EXECUTE, { body: { command: "sleep 60" } });
    const runningId = await until(
      async () => (await b.api("GET", `${EXECUTIONS}?outcome=pending`)).json.executions[0]?.execution_id,
      5000,
      "the long execution to start",
    );

    // Past --retain (1 day) but inside the key window (3 days): a receipt may still ask; kept.
    const s1 = await sweptAt(b, clock.advance(2 * DAY));
    expect(s1.retention).toMatchObject({ retain_ms: 3 * DAY, key_retention_ms: 3 * DAY });
    expect(s1.last_sweep).toMatchObject({ deleted_executions: 0, deleted_processes: 0 });
    expect((await b.api("GET", `${EXECUTIONS}/${old}`)).status).toBe(200);

    // Past the key window too: gone, record, events and output; the running one stays.
    // (Sweeps repeat while the clock stands still: the state says what happened, and the log.)
    const s2 = await sweptAt(b, clock.advance(2 * DAY));
    expect(b.logs).toContain("retention: deleted 1 execution(s) and 1 process(es), dropped 0 output(s)");
    expect((await b.api("GET", `${EXECUTIONS}/${old}`)).json.error.code).toBe("execution_not_found");
    expect((await b.api("GET", `/api/v1/sandbox/default/processes/${proc.json.process_id}`)).status).toBe(404);
    expect((await b.api("GET", `${EXECUTIONS}/${runningId}`)).json.outcome).toBe("pending");
    expect(s2.executions).toMatchObject({ kept: 1, running: 1 });

    await b.api("POST", `${EXECUTIONS}/${runningId}/cancel`, { body: {} });
    expect((await running).json.outcome).toBe("cancelled");
  });
});

describe("by size", () => {
  it("drops the oldest finished outputs first and keeps their records", async () => {
    const clock = manualClock();
    const MiB = 1024 * 1024;
    // Three outputs of 3 MiB (each record keeps a 1 MiB tail): about 12.3 MiB in all.
    const b = await start({
      now: clock.now,
      retainBytes: 10 * MiB,
      keyRetentionMs: 7 * DAY,
      retentionSweepMs: 20,
      // Output mostly in the output files, not in the database's events.
      eventOutputBudget: 16 * 1024,
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await run(b, `head -c ${3 * MiB} /dev/zero`));
    const s = await sweptAt(b, clock.advance(1000));
    expect(s.last_sweep).toMatchObject({ deleted_executions: 0, over_limit_bytes: 0 });
    expect(b.logs).toContain("retention: deleted 0 execution(s) and 0 process(es), dropped 1 output(s)");
    expect(s.bytes.total).toBeLessThanOrEqual(10 * MiB);
    expect(s.executions).toMatchObject({ kept: 3, outputs_dropped: 1 });
    // The oldest lost its full output, not its record.
    const oldest = await b.api("GET", `${EXECUTIONS}/${ids[0]}`);
    expect(oldest.json).toMatchObject({ outcome: "succeeded", exit_code: 0, stdout_bytes: 3 * MiB });
    expect((await b.api("GET", `${EXECUTIONS}/${ids[0]}/output?stream=stdout`)).json.error.code).toBe(
      "output_not_found",
    );
    expect((await b.api("GET", `${EXECUTIONS}/${ids[2]}/output?stream=stdout&limit=16`)).status).toBe(200);
  });

  it("never deletes a record inside the key window for space: it says how much is over", async () => {
    const clock = manualClock();
    const b = await start({ now: clock.now, retainBytes: 1, keyRetentionMs: 7 * DAY, retentionSweepMs: 20 });
    const id = await run(b, "echo kept");
    const s = await sweptAt(b, clock.advance(1000));
    expect(s.last_sweep!.over_limit_bytes).toBeGreaterThan(0);
    expect((await b.api("GET", `${EXECUTIONS}/${id}`)).json.stdout).toBe("kept\n");
    expect(b.logs.join("\n")).toContain("over the size limit are kept");
    // Past the key window (but not past --retain), space wins.
    const later = await sweptAt(b, clock.advance(8 * DAY));
    expect(later.executions.kept).toBe(0);
    expect(b.logs).toContain("retention: deleted 1 execution(s) and 0 process(es), dropped 0 output(s)");
    expect((await b.api("GET", `${EXECUTIONS}/${id}`)).status).toBe(404);
  });
});

describe("sbx daemon status", () => {
  let home: string | undefined;
  let handle: BackendHandle | undefined;
  afterEach(async () => {
    await handle?.close();
    if (home) removeHome(home);
  });

  it("shows what is kept, its size, and for how long", async () => {
    home = makeHome("sbx-retain-status-");
    const paths = resolvePaths({ SBX_HOME: home });
    // The daemon as sbx finds it: its data directory and socket under SBX_HOME.
    handle = await startBackend({
      dataDir: paths.daemonDir,
      socketPath: paths.socketPath,
      retainMs: 10 * DAY,
      retainBytes: 1024 ** 3,
    });
    const exec = createBufferIO();
    expect(await main(["exec", "--", "echo", "one"], exec, { SBX_HOME: home })).toBe(0);
    const io = createBufferIO();
    expect(await main(["daemon", "status"], io, { SBX_HOME: home })).toBe(0);
    const kept = io
      .stdoutText()
      .split("\n")
      .find((l) => l.startsWith("kept\t"))!;
    expect(kept).toMatch(/^kept\t1 execution \(0 running\), 0 processes \(0 running\)\t/);
    expect(kept).toMatch(/\t[\d.]+ (KiB|MiB) of 1\.0 GiB \(database /);
    expect(kept).toMatch(/\tfinished work kept 10d$/);
    const json = createBufferIO();
    expect(await main(["daemon", "status", "--json"], json, { SBX_HOME: home })).toBe(0);
    const doc = JSON.parse(json.stdoutText()) as { storage: StorageReport };
    expect(doc.storage.executions.kept).toBe(1);
    expect(doc.storage.bytes.total).toBe(
      doc.storage.bytes.database + doc.storage.bytes.execution_output + doc.storage.bytes.process_logs,
    );
  });
});
