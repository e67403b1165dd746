// Pause and resume (docs/operations.md, "Pause and resume"): a paused sandbox's
// processes are frozen by the cgroup freezer — a spinner in it gets no CPU while a
// spinner on the host keeps getting some — a new command is refused with 409
// sandbox_paused naming `sbx sandbox resume`, and resume lets the same spinner go on.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeNeeding } from "../support/requirements.js";
import { processesWithArg, startTestBackend, type TestBackend, until } from "./support.js";

/** CPU time (user + system, in clock ticks) a process has used, from /proc/PID/stat. */
function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime: fields 14 and 15 of stat(5), 12 and 13 after the command name.
  return Number(fields[11]) + Number(fields[12]);
}

describeNeeding(["bwrap", "cgroupFreezer"], "pause and resume", () => {
  let b: TestBackend;
  let hostSpinner: ChildProcess | null = null;
  beforeAll(async () => {
    b = await startTestBackend();
    const res = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "spin", isolation: "bwrap" } });
    expect(res.status, res.text).toBe(201);
  });
  afterAll(async () => {
    hostSpinner?.kill("SIGKILL");
    await b.stop();
  });

  it("freezes a spinner (no CPU while a host spinner runs), refuses exec with the next command, and resume continues it", async () => {
    const mark = `spin-${process.pid}-${Date.now()}`;
    const started = await b.api("POST", "/api/v1/sandbox/spin/processes", {
      body: { command: ["sh", "-c", "while :; do :; done", mark] },
    });
    expect(started.status, started.text).toBe(201);
    const pid = await until(() => processesWithArg(mark)[0], 30_000, "the spinner");
    // It runs: it has used CPU.
    await until(() => cpuTicks(pid) > 0, 30_000, "the spinner to use CPU");

    const paused = await b.api("POST", "/api/v1/sandbox/spin/pause");
    expect(paused.status, paused.text).toBe(200);
    expect(paused.json.environment).toMatchObject({ state: "paused" });
    expect((await b.api("GET", "/api/v1/sandboxes")).json.sandboxes).toContainEqual(
      expect.objectContaining({ name: "spin", status: "paused" }),
    );

    // While a spinner on the host uses CPU (half a second of it), the frozen one uses none.
    const before = cpuTicks(pid);
    hostSpinner = spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" });
    const hostPid = hostSpinner.pid!;
    await until(() => cpuTicks(hostPid) >= 50, 120_000, "the host spinner to use 0.5 s of CPU");
    expect(cpuTicks(pid)).toBe(before);
    hostSpinner.kill("SIGKILL");
    hostSpinner = null;

    // A new command is refused, saying how to go on; nothing of it ran.
    const refused = await b.api("POST", "/api/v1/sandbox/spin/execute", { body: { command: ["true"] } });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.error).toMatchObject({
      code: "sandbox_paused",
      details: { next: "sbx sandbox resume spin" },
    });
    const start = await b.api("POST", "/api/v1/sandbox/spin/processes", { body: { command: ["true"] } });
    expect(start.json.error?.code).toBe("sandbox_paused");
    expect((await b.api("GET", "/api/v1/sandbox/spin/executions")).json.executions).toEqual([]);

    // Resumed: the same process goes on using CPU.
    const resumed = await b.api("POST", "/api/v1/sandbox/spin/resume");
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.json.environment).toMatchObject({ state: "running" });
    await until(() => cpuTicks(pid) > before, 30_000, "the spinner to use CPU again");
    expect(processesWithArg(mark)).toEqual([pid]);
    const ran = await b.api("POST", "/api/v1/sandbox/spin/execute", { body: { command: ["echo", "on"] } });
    expect(ran.json).toMatchObject({ outcome: "succeeded", stdout: "on\n" });
  });

  it("stops a paused sandbox (thawed first, so that its processes can end)", async () => {
    const mark = `spin-stop-${process.pid}-${Date.now()}`;
    await b.api("POST", "/api/v1/sandbox/spin/processes", { body: { command: ["sh", "-c", "sleep 1000", mark] } });
    await until(() => processesWithArg(mark).length > 0, 30_000, "the process");
    expect((await b.api("POST", "/api/v1/sandbox/spin/pause")).status).toBe(200);
    const stopped = await b.api("POST", "/api/v1/sandbox/spin/stop");
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.json.environment).toMatchObject({ state: "stopped" });
    await until(() => processesWithArg(mark).length === 0, 30_000, "the process to end");
  });

  it("admits a job submitted while paused: it is running (its turn came) but nothing of it runs until resumed", async () => {
    const created = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "queue", isolation: "bwrap" } });
    expect(created.status, created.text).toBe(201);
    const ws = (await b.api("GET", "/api/v1/sandbox/queue")).json.host_workspace as string;
    expect((await b.api("POST", "/api/v1/sandbox/queue/execute", { body: { command: ["true"] } })).status).toBe(200);
    expect((await b.api("POST", "/api/v1/sandbox/queue/pause")).status).toBe(200);

    // Its command waits for a file the test writes at once: only being frozen keeps it from ending.
    const mark = `paused-job-${process.pid}-${Date.now()}`;
    fs.writeFileSync(path.join(ws, "go"), "");
    const submitted = await b.api("POST", "/api/v1/sandbox/queue/jobs", {
      body: {
        request_id: "while-paused",
        jobs: [{ name: "j", command: ["sh", "-c", "until [ -e go ]; do sleep 0.05; done; echo ran > ran", mark] }],
      },
    });
    expect(submitted.status, submitted.text).toBe(201);
    const jobUrl = `/api/v1/sandbox/queue/jobs/${submitted.json.jobs[0].job_id}`;
    // Admitted and started: its turn came, and the sandbox's frozen init holds its command.
    await until(async () => (await b.api("GET", jobUrl)).json.status === "running", 30_000, "the job to start");
    // While a spinner on the host gets half a second of CPU, the frozen job does nothing.
    hostSpinner = spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" });
    const hostPid = hostSpinner.pid!;
    await until(() => cpuTicks(hostPid) >= 50, 120_000, "the host spinner to use 0.5 s of CPU");
    hostSpinner.kill("SIGKILL");
    hostSpinner = null;
    expect(fs.existsSync(path.join(ws, "ran"))).toBe(false);
    expect((await b.api("GET", jobUrl)).json.status).toBe("running");
    expect(processesWithArg(mark)).toEqual([]);

    expect((await b.api("POST", "/api/v1/sandbox/queue/resume")).status).toBe(200);
    const ended = await until(
      async () => {
        const job = (await b.api("GET", `${jobUrl}?wait_ms=10000`)).json;
        return job.status !== "running" && job;
      },
      60_000,
      "the job to end",
    );
    expect(ended).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(fs.readFileSync(path.join(ws, "ran"), "utf8")).toBe("ran\n");
    expect((await b.api("POST", "/api/v1/sandbox/queue/stop")).status).toBe(200);
  });

  it("refuses to pause a sandbox that does not run, and one without isolation, saying why", async () => {
    const stopped = await b.api("POST", "/api/v1/sandbox/spin/pause");
    expect(stopped.status, stopped.text).toBe(409);
    expect(stopped.json.error).toMatchObject({ code: "sandbox_not_running" });
    await b.api("POST", "/api/v1/sandbox/create", { body: { name: "plain", isolation: "none" } });
    const none = await b.api("POST", "/api/v1/sandbox/plain/pause");
    expect(none.status, none.text).toBe(400);
    expect(none.json.error.code).toBe("pause_unavailable");
    expect(none.json.error.details.reason).toContain("isolation none");
  });
});
