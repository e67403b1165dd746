// Per-command usage, performed for real (docs/operations.md, "Per-command usage"): a CPU
// spinner and a 200 MB allocation run side by side in one sandbox, and each record
// carries its own CPU time and memory peak, not its neighbour's; a command killed at its
// sandbox's memory limit says that limit, and one whose forks the pids limit refused
// says pids; a process run and a job carry theirs too. Bounds are wide (the machine is
// shared) and nothing is timed.

import { afterAll, beforeAll, expect, it } from "vitest";
import type { CommandUsage } from "../../src/protocol/types.js";
import { describeNeeding } from "../support/requirements.js";
import { startTestBackend, type TestBackend, until } from "./support.js";

const MB = 1000 * 1000;
const MiB = 1024 * 1024;

// About a second of CPU in user mode for a shell on a quiet machine; more under load.
const SPINNER = "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; echo spun";
// 200 MB written (so every page is touched), held for a moment, then let go.
const ALLOCATION = `python3 -c 'import time; b = b"x" * (200 * 1000 * 1000); time.sleep(0.5); print(len(b))'`;

describeNeeding(["bwrap", "cgroupMemory", "cgroupPids", "cgroupCpuTime"], "per-command usage", () => {
  let b: TestBackend;
  beforeAll(async () => {
    b = await startTestBackend();
  });
  afterAll(async () => {
    await b.stop();
  });
  const create = async (name: string, limits: Record<string, number | null> = {}) => {
    const res = await b.api("POST", "/api/v1/sandbox/create", { body: { name, isolation: "bwrap", limits } });
    expect(res.status, res.text).toBe(201);
  };
  const run = async (sandbox: string, command: string) =>
    (await b.api("POST", `/api/v1/sandbox/${sandbox}/execute`, { body: { command, timeout: 300_000 } })).json as {
      stdout: string;
      outcome: string;
      end_reason?: string | null;
      usage: CommandUsage | null;
    };

  it("a spinner and a 200 MB allocation side by side: each record carries its own CPU time and memory peak", async () => {
    await create("side");
    const [spin, alloc] = await Promise.all([run("side", SPINNER), run("side", ALLOCATION)]);
    expect(spin.stdout).toBe("spun\n");
    expect(alloc.stdout).toBe(`${200 * MB}\n`);
    const s = spin.usage!;
    const a = alloc.usage!;
    expect(s.unavailable, JSON.stringify({ s, a })).toEqual({});
    expect(a.unavailable).toEqual({});
    expect(s.measured_by).toContain("a cgroup of its own");
    // The spinner: CPU, little memory.
    expect(s.cpu_user_us! + s.cpu_system_us!).toBeGreaterThan(100_000);
    expect(s.memory_peak_bytes!, JSON.stringify({ s, a })).toBeLessThan(50 * MiB);
    // The allocation: 200 MB at its peak, which the spinner's never shows.
    expect(a.memory_peak_bytes!, JSON.stringify({ s, a })).toBeGreaterThan(190 * MB);
    expect(a.memory_peak_bytes!).toBeLessThan(400 * MB);
    expect(a.cpu_user_us! + a.cpu_system_us!).toBeGreaterThan(0);
    expect(s.oom_kills).toBe(0);
    expect(a.limits_hit).toEqual([]);
    // The exit event says it too.
    const spinId = (spin as unknown as { execution_id: string }).execution_id;
    const events = await b.api("GET", `/api/v1/sandbox/side/executions/${spinId}/events`);
    const exit = events.json.events.find((e: { type: string }) => e.type === "exit");
    expect(exit.data.usage).toEqual(s);
  });

  it("a command killed at its sandbox's memory limit says memory; one refused forks at the pids limit says pids", async () => {
    await create("tight", { memory_bytes: 64 * MiB, pids: 32 });
    const hog = await run("tight", `python3 -c 'b = b"x" * (300 * 1024 * 1024)'`);
    expect(hog.end_reason).toBe("out_of_memory");
    expect(hog.usage!.oom_kills).toBeGreaterThanOrEqual(1);
    expect(hog.usage!.limits_hit, JSON.stringify(hog.usage)).toEqual(["memory"]);
    expect(hog.usage!.memory_peak_bytes!).toBeGreaterThan(32 * MiB);
    const forks = await run("tight", "for i in $(seq 60); do sleep 2 & done; wait; echo done");
    expect(forks.usage!.limits_hit, JSON.stringify(forks)).toContain("pids");
    expect(forks.usage!.limits_hit).not.toContain("memory");
    // The next command touched nothing.
    const calm = await run("tight", "echo calm");
    expect(calm.usage!.limits_hit).toEqual([]);
    expect(calm.usage!.oom_kills).toBe(0);
  });

  it("a supervised process's run and a job carry their usage", async () => {
    await create("others");
    const started = await b.api("POST", "/api/v1/sandbox/others/processes", {
      body: { command: `python3 -c 'b = b"y" * (80 * 1000 * 1000)'` },
    });
    expect(started.status, started.text).toBe(201);
    const pid = started.json.process_id as string;
    let proc: { last_run: { usage: CommandUsage } | null } = { last_run: null };
    await until(
      async () => {
        proc = (await b.api("GET", `/api/v1/sandbox/others/processes/${pid}`)).json;
        return proc.last_run !== null;
      },
      60_000,
      "the process run ended",
    );
    expect(proc.last_run!.usage.memory_peak_bytes!).toBeGreaterThan(75 * MB);
    const submitted = await b.api("POST", "/api/v1/sandbox/others/jobs", {
      body: { request_id: "usage-1", jobs: [{ name: "spin", command: SPINNER }] },
    });
    expect(submitted.status, submitted.text).toBe(201);
    const jobId = submitted.json.jobs[0].job_id as string;
    let job: { status: string; usage?: CommandUsage | null } = { status: "queued" };
    await until(
      async () => {
        job = (await b.api("GET", `/api/v1/sandbox/others/jobs/${jobId}`)).json;
        return job.status === "succeeded" || job.status === "failed";
      },
      120_000,
      "the job ended",
    );
    expect(job.status).toBe("succeeded");
    expect(job.usage!.cpu_user_us! + job.usage!.cpu_system_us!).toBeGreaterThan(100_000);
    expect(job.usage!.memory_peak_bytes!).toBeLessThan(50 * MiB);
  });
});
