// `sbx daemon run`'s storage settings, where they happen: given on the command line of
// a real daemon process (spawned, as a user starts it), each one is seen on the wire —
// retention in GET /storage, log rotation in a process's logs, the output cap in an
// execution's output. A bad value is refused before anything starts, naming its flag.

import { describe, expect, it } from "vitest";
import { resolvePaths } from "../../src/config/paths.js";
import { socketClient } from "../backend/support.js";
import { makeHome } from "../support/cli.js";
import { startForegroundDaemon, stopForegroundDaemon } from "../support/daemon.js";
import { runMain } from "../support/in-process.js";
import { until } from "../support/wait.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const KIB = 1024;

describe("sbx daemon run with every storage setting", () => {
  it("--retain, --retain-size, --key-retention, --process-log-segment, --process-log-keep, --execution-output-max", async (t) => {
    const home = makeHome("sbx-e2e-flags-");
    const daemon = await startForegroundDaemon(home, [
      ...["--retain", "45d", "--retain-size", "3GiB", "--key-retention", "2d"],
      ...["--process-log-segment", "1k", "--process-log-keep", "2k", "--execution-output-max", "4k"],
    ]);
    const client = socketClient(resolvePaths({ SBX_HOME: home }).socketPath);
    t.onTestFinished(async () => {
      await client.close();
      await stopForegroundDaemon(daemon);
    });
    const { api } = client;

    // Retention: what GET /storage says the daemon keeps, and for how long.
    const storage = (await api("GET", "/api/v1/storage")).json;
    expect(storage.retention).toEqual({
      retain_ms: 45 * DAY_MS,
      retain_bytes: 3 * 1024 ** 3,
      key_retention_ms: 2 * DAY_MS,
    });

    // Process logs: 8 KiB written in 1 KiB segments, about 2 KiB kept.
    const started = await api("POST", "/api/v1/sandbox/default/processes", {
      body: { command: "head -c 8192 /dev/zero | tr '\\0' a" },
    });
    expect(started.status, started.text).toBe(201);
    const pid = started.json.process_id as string;
    await until(
      async () => (await api("GET", `/api/v1/sandbox/default/processes/${pid}/result`)).json.complete === true,
      15_000,
      "the process to end",
    );
    const logs = (await api("GET", `/api/v1/sandbox/default/processes/${pid}/logs?offset=0`)).json;
    expect(logs).toMatchObject({ rotated: true, next_offset: 8 * KIB, eof: true });
    // Rotated away: all but the last two segments, and the one being written.
    expect(logs.oldest_offset).toBeGreaterThanOrEqual(8 * KIB - 3 * KIB);
    expect(logs.oldest_offset).toBeLessThanOrEqual(8 * KIB - 2 * KIB);
    expect(Buffer.from(logs.data, "base64").toString()).toBe("a".repeat(8 * KIB - logs.oldest_offset));

    // Execution output: 16 KiB printed, the first 4 KiB kept on disk.
    const exec = await api("POST", "/api/v1/sandbox/default/execute", {
      body: { command: "head -c 16384 /dev/zero | tr '\\0' b" },
    });
    expect(exec.json).toMatchObject({ outcome: "succeeded", stdout_bytes: 16 * KIB, stdout_truncated: true });
    const output = (
      await api(
        "GET",
        `/api/v1/sandbox/default/executions/${exec.json.execution_id}/output?stream=stdout&offset=0&limit=65536`,
      )
    ).json;
    expect(output).toMatchObject({ offset: 0, next_offset: 4 * KIB, eof: true });
  });

  it.each([
    ["--retain", "soon"],
    ["--retain-size", "lots"],
    ["--key-retention", "0s"],
    ["--process-log-segment", "1x"],
    ["--process-log-keep", "-1k"],
    ["--execution-output-max", "big"],
  ])("%s %s is refused with exit 125, naming the flag, before a daemon starts", async (flag, value) => {
    const home = makeHome("sbx-flags-");
    const r = await runMain(["daemon", "run", flag, value], { home });
    expect(r.code).toBe(125);
    expect(r.stderr).toContain(flag);
    expect(r.stderr).toContain(value);
  });
});
