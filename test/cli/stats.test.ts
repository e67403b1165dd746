// sbx sandbox stats as a user meets it (docs/operations.md, "Sandbox stats"): a sandbox
// running a CPU spinner and holding a 200 MB allocation shows both — CPU % and memory
// against its limit — from its cgroup; a stopped one says what cannot be had and why.
// Wide bounds, nothing timed.

import { afterAll, beforeAll, expect, it } from "vitest";
import { cpuPercent, statsLines, type StatsRow } from "../../src/cli/commands/sandbox/stats.js";
import { type LocalHome, localHome, startMain } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";
import { until } from "../support/wait.js";

const MB = 1000 * 1000;

describeNeeding(["bwrap", "cgroupMemory", "cgroupPids", "cgroupCpuTime"], "sbx sandbox stats", () => {
  let local: LocalHome;
  beforeAll(async () => {
    local = await localHome("sbx-stats-");
    expect((await local.sbx(["sandbox", "create", "busy"])).code).toBe(0);
    expect((await local.sbx(["sandbox", "create", "idle"])).code).toBe(0);
  });
  afterAll(async () => {
    await local.close();
  });

  it("a spinner and a 200 MB allocation show as CPU % and memory; an idle sandbox says what it cannot show", async () => {
    const spin = await local.sbx(["process", "start", "-s", "busy", "--", "sh", "-c", "while :; do :; done"]);
    expect(spin.code, spin.stderr).toBe(0);
    const hold = await local.sbx([
      "process",
      "start",
      "-s",
      "busy",
      "--",
      "python3",
      "-c",
      'import time; b = b"x" * (200 * 1000 * 1000); print("held", flush=True); time.sleep(600)',
    ]);
    expect(hold.code, hold.stderr).toBe(0);
    type Doc = { sandboxes: StatsRow[] };
    // Wait for the allocation to be made (its memory is there), not for a time.
    const doc = await until(
      async () => {
        const r = await local.json<Doc>(["sandbox", "stats", "busy", "idle", "--json"]);
        const busy = r.doc.sandboxes.find((s) => s.name === "busy")!;
        return (busy.memory_bytes ?? 0) > 190 * MB && r.doc;
      },
      120_000,
      "the allocation to show",
    );
    const busy = doc.sandboxes.find((s) => s.name === "busy")!;
    expect(busy.state).toBe("running");
    expect(busy.cpu_percent!, JSON.stringify(busy)).toBeGreaterThan(10);
    expect(busy.memory_peak_bytes!).toBeGreaterThanOrEqual(busy.memory_bytes!);
    expect(busy.memory_limit_bytes).toBe(2 * 1024 ** 3);
    expect(busy.pids!).toBeGreaterThan(3);
    expect(busy.tmp_bytes).not.toBeNull();
    expect(busy.unavailable.network).toBe("it has no network (only its own loopback)");
    const idle = doc.sandboxes.find((s) => s.name === "idle")!;
    expect(idle.state).toBe("stopped");
    expect(idle.tmp_bytes).toBeNull();
    expect(idle.unavailable.tmp).toContain("its environment is not running");
    // The table, as a person reads it.
    const words = await local.sbx(["sandbox", "stats", "busy"]);
    expect(words.code).toBe(0);
    expect(words.stdout).toMatch(/^NAME\s+STATE\s+CPU %\s+MEM \/ LIMIT/);
    expect(words.stdout).toMatch(/busy\s+running\s+[0-9.]+%\s+[0-9.]+ MiB \/ 2\.0 GiB/);
  });

  it("-f --json prints JSON Lines: one document per sandbox per sample, each parseable, until interrupted", async () => {
    const interrupt = new AbortController();
    const following = startMain(["sandbox", "stats", "busy", "idle", "-f", "--json"], {
      home: local.home,
      interrupt: interrupt.signal,
    });
    const complete = () =>
      following.io
        .stdoutText()
        .split("\n")
        .slice(0, -1)
        .map((l) => JSON.parse(l) as StatsRow);
    // Three samples of the two sandboxes (waited for, not timed).
    await until(() => complete().length >= 6, 60_000, "three samples of two sandboxes");
    interrupt.abort();
    const result = await following.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.endsWith("\n")).toBe(true);
    const rows = result.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as StatsRow);
    expect(rows.length % 2).toBe(0);
    expect(rows.slice(0, 6).map((r) => r.name)).toEqual(["busy", "idle", "busy", "idle", "busy", "idle"]);
    // Each line is a sample of its own: later samples of a sandbox are taken later.
    const busy = rows.filter((r) => r.name === "busy");
    for (let i = 1; i < busy.length; i++)
      expect(Date.parse(busy[i]!.sampled_at)).toBeGreaterThan(Date.parse(busy[i - 1]!.sampled_at));
    expect(busy.every((r) => r.state === "running" && typeof r.cpu_percent === "number")).toBe(true);
    expect(rows.filter((r) => r.name === "idle").every((r) => r.state === "stopped" && r.cpu_percent === null)).toBe(
      true,
    );
  });

  it("-f on a terminal redraws the table in place: cleared once, then each frame from the top, no scrolling", async () => {
    const interrupt = new AbortController();
    const following = startMain(["sandbox", "stats", "busy", "-f"], {
      home: local.home,
      tty: true,
      interrupt: interrupt.signal,
    });
    const frames = () => following.io.stdoutText().split("\x1b[H").slice(1);
    // Three frames drawn (each complete: it ends by clearing what is below it).
    await until(() => frames().filter((f) => f.endsWith("\x1b[J")).length >= 3, 60_000, "three frames");
    interrupt.abort();
    const result = await following.done;
    expect(result.code, result.stderr).toBe(0);
    // The screen is cleared once, before the first frame, never again.
    expect(result.stdout.startsWith("\x1b[2J\x1b[H")).toBe(true);
    expect(result.stdout.split("\x1b[2J")).toHaveLength(2);
    for (const frame of frames()) {
      // Each frame: the header and the sandbox's row, each line cleared to its end, then below it cleared.
      const lines = frame
        .replace(/\x1b\[J$/, "")
        .split("\n")
        .filter((l) => l !== "");
      expect(lines[0]).toMatch(/^NAME\s+STATE\s+CPU %.*\x1b\[K$/);
      expect(lines.some((l) => /^busy\s+running\s/.test(l))).toBe(true);
      for (const l of lines) expect(l.endsWith("\x1b[K"), JSON.stringify(l)).toBe(true);
    }
  });
});

it("CPU % is the difference of two samples over the time between them; the table says '-' for what is null", () => {
  const at = (t: number, cpu: number | null) =>
    ({ sandbox_id: "s", sampled_at: new Date(t).toISOString(), cpu_usage_us: cpu }) as StatsRow;
  expect(cpuPercent(at(0, 0), at(1000, 500_000))).toBe(50);
  expect(cpuPercent(at(0, 0), at(1000, 2_000_000))).toBe(200);
  expect(cpuPercent(undefined, at(1000, 5))).toBeNull();
  expect(cpuPercent(at(0, null), at(1000, 5))).toBeNull();
  const lines = statsLines([
    {
      ...at(0, null),
      name: "x",
      state: "stopped",
      cpu_percent: null,
      cpus_limit: null,
      memory_bytes: null,
      memory_peak_bytes: null,
      memory_limit_bytes: null,
      pids: null,
      pids_limit: 64,
      tmp_bytes: null,
      tmp_limit_bytes: null,
      workspace_bytes: 0,
      net_rx_bytes: null,
      net_tx_bytes: null,
      unavailable: { memory: "no cgroups here" },
      measured_by: "no cgroup",
    },
  ]);
  expect(lines[1]).toMatch(/^x\s+stopped\s+-\s+-\s+-\s+-\s+-\s+0 B\s+-$/);
  expect(lines.slice(2)).toEqual(["", "x: memory: no cgroups here"]);
});
