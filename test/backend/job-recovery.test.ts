// Jobs across a restart of the backend: running jobs are never resumed (interrupted
// when their main process still ran, lost when it vanished without an exit status,
// their recorded status when it had exited), what a main process left behind is
// killed and named, queued jobs stay queued and run, and the daemon does not go idle
// while jobs are unfinished.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BackendStore } from "../../src/backend/store/db.js";
import { backendsPerTest, groupAlive, type TestBackend, until, untilExecd, workspaceOf } from "./support.js";

const JOBS = "/api/v1/sandbox/default/jobs";
// Job semantics (leftovers named, host pids) are checked without isolation; the
// bwrap run of jobs has its own tests in jobs-bwrap.test.ts.
const started = backendsPerTest("none");

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
type Json = any;

async function submit(b: TestBackend, body: unknown): Promise<Json> {
  const res = await b.api("POST", JOBS, { body });
  expect(res.status, res.text).toBe(201);
  return res.json;
}

const job = async (b: TestBackend, id: string): Promise<Json> =>
  (await b.api("GET", `${JOBS}/${id}?output_limit=0`)).json;

async function ended(b: TestBackend, id: string): Promise<Json> {
  return until(
    async () => {
      const j = (await b.api("GET", `${JOBS}/${id}?wait_ms=5000&output_limit=0`)).json;
      return ["queued", "waiting", "running", "cancel_requested"].includes(j.status) ? undefined : j;
    },
    30_000,
    `job ${id} to end`,
  );
}

/** The pid a job's shell wrote to a file in the workspace (its main process: the group leader). */
async function pidFrom(b: TestBackend, file: string): Promise<number> {
  const ws = await workspaceOf(b);
  const pid = await until(() => {
    const text = fs.existsSync(path.join(ws, file)) ? fs.readFileSync(path.join(ws, file), "utf8") : "";
    return text.endsWith("\n") ? Number(text) : undefined;
  });
  return pid!;
}

function alive(pid: number): boolean {
  try {
    return !fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z");
  } catch {
    return false;
  }
}

/**
 * Runs a job that writes its main process's pid to `leader` and a child's to `child`,
 * crashes the backend, then kills the main process while no backend watches it.
 */
async function crashThenMainDies(command: string): Promise<{ first: TestBackend; id: string; child: number }> {
  const first = await started();
  const answer = await submit(first, { request_id: "vanish", jobs: [{ name: "v", command }] });
  const leader = await pidFrom(first, "leader");
  const child = await pidFrom(first, "child");
  await first.stop({ simulateCrash: true });
  process.kill(leader, "SIGKILL");
  await until(() => !alive(leader), 5000, "the main process to die");
  return { first, id: answer.jobs[0].job_id, child };
}

describe("restart recovery of jobs", () => {
  it("a job running at a crash is interrupted, its group killed; a queued one stays queued and runs", async () => {
    const first = await started({ jobConcurrency: 1 });
    const answer = await submit(first, {
      request_id: "crash",
      jobs: [
        { name: "long", command: "echo $$ > leader; echo working; sleep 60" },
        { name: "next", command: "echo ran next" },
        { name: "after", command: "echo after", depends_on: ["long"], dependency_policy: "all_terminal" },
      ],
    });
    const [long, next, after] = answer.jobs.map((j: Json) => j.job_id);
    const leader = await pidFrom(first, "leader");
    expect(await job(first, next)).toMatchObject({ status: "queued" });
    // Output is committed in batches; crash once this much is committed.
    await until(async () => (await first.api("GET", `${JOBS}/${long}?after_seq=0`)).json.output.length > 0);
    await first.stop({ simulateCrash: true });
    expect(groupAlive(leader)).toBe(true);

    const second = await started({ jobConcurrency: 1 }, first.dir);
    expect(groupAlive(leader)).toBe(false);
    expect(await job(second, long)).toMatchObject({
      status: "interrupted",
      exit_code: null,
      signal: null,
      error: "the backend stopped while it ran; its processes were killed when the backend started again",
      leftover_processes: [],
    });
    expect((await job(second, long)).finished_at).not.toBeNull();
    expect(await ended(second, next)).toMatchObject({ status: "succeeded" });
    expect(await ended(second, after)).toMatchObject({ status: "succeeded" });
    // What it printed before the crash is still there.
    const kept = (await second.api("GET", `${JOBS}/${long}`)).json.output;
    expect(kept.map((c: Json) => Buffer.from(c.data, "base64").toString()).join("")).toBe("working\n");
    expect(second.logs.some((l) => l.startsWith(`recovery: job ${long} (long): interrupted`))).toBe(true);
  });

  it("a job whose main process vanished without an exit status is lost; what it left behind is killed and named", async () => {
    const { first, id, child } = await crashThenMainDies(
      `sleep 60 & ${untilExecd}; echo $! > child; echo $$ > leader; wait`,
    );
    expect(alive(child)).toBe(true);

    const second = await started({}, first.dir);
    expect(await job(second, id)).toMatchObject({
      status: "lost",
      exit_code: null,
      error: "its process ended while the backend was down; its exit status is not known",
      leftover_processes: ["sleep"],
    });
    await until(() => !alive(child), 5000, "the leftover to be killed");
  });

  it("a job whose main process had exited (status recorded) ends with that status; leftovers are killed and named", async () => {
    const { first, id, child } = await crashThenMainDies(
      `sleep 60 > /dev/null 2>&1 & ${untilExecd}; echo $! > child; echo $$ > leader; wait`,
    );
    // As if the crash came after the main process's exit 0 was recorded, before its group was wrapped up.
    const store = new BackendStore(path.join(first.dataDir, "backend.db"));
    store
      .statement("UPDATE jobs SET exit_code = 0, signal = NULL, main_exited_at = ? WHERE job_id = ?")
      .run(new Date().toISOString(), id);
    store.close();

    const second = await started({}, first.dir);
    expect(await job(second, id)).toMatchObject({
      status: "succeeded",
      exit_code: 0,
      error: null,
      leftover_processes: ["sleep"],
    });
    await until(() => !alive(child), 5000, "the leftover to be killed");
  });

  it("a job whose group was recorded in another boot is lost and its group left alone, as every run's is", async () => {
    const first = await started();
    const answer = await submit(first, {
      request_id: "reboot",
      jobs: [{ name: "r", command: "echo $$ > leader; sleep 60" }],
    });
    const id = answer.jobs[0].job_id;
    const leader = await pidFrom(first, "leader");
    await first.stop({ simulateCrash: true });
    // As if its group had been recorded before a reboot: its number may be anyone's now.
    const store = new BackendStore(path.join(first.dataDir, "backend.db"));
    store.statement("UPDATE jobs SET boot_id = ? WHERE job_id = ?").run("00000000-0000-0000-0000-000000000000", id);
    store.close();

    const second = await started({}, first.dir);
    expect(await job(second, id)).toMatchObject({
      status: "lost",
      error: `the backend lost it; process group ${leader} was started in another boot (00000000-0000-0000-0000-000000000000); left alone`,
      leftover_processes: [],
    });
    // Not signalled: it still runs (the test ends it itself).
    expect(groupAlive(leader)).toBe(true);
    process.kill(-leader, "SIGKILL");
    await until(() => !groupAlive(leader), 5000, "the test's cleanup");
  });

  it("a graceful stop ends running jobs as interrupted and keeps queued ones, which run with the next backend", async () => {
    const first = await started({ jobConcurrency: 1 });
    const answer = await submit(first, {
      request_id: "stop",
      jobs: [
        { name: "running", command: "echo $$ > leader; sleep 60" },
        { name: "queued", command: "echo later" },
      ],
    });
    const [running, queued] = answer.jobs.map((j: Json) => j.job_id);
    const leader = await pidFrom(first, "leader");
    await first.stop();
    expect(groupAlive(leader)).toBe(false);
    const second = await started({ jobConcurrency: 1 }, first.dir);
    expect(await job(second, running)).toMatchObject({
      status: "interrupted",
      signal: "SIGTERM",
      error: "the backend shut down while it ran; it was not resumed",
    });
    expect(await ended(second, queued)).toMatchObject({ status: "succeeded" });
  });

  it("a backend does not go idle while a job is queued or running", async () => {
    const idles: number[] = [];
    const b = await started({ idleExitMs: 100, onIdle: () => idles.push(Date.now()), jobConcurrency: 1 });
    const ws = await workspaceOf(b);
    // Idle before any job (a slow client may leave the quiet period between two requests):
    // waited for first, so that it is never taken for one while the jobs are there.
    await until(() => idles.length > 0, 10_000, "onIdle before the jobs");
    const before = idles.length;
    const answer = await submit(b, {
      request_id: "idle",
      jobs: [
        { name: "a", command: "while [ ! -e go ]; do sleep 0.02; done; sleep 0.3; touch a-done" },
        { name: "b", command: "true" },
      ],
    });
    await until(async () => (await job(b, answer.jobs[0].job_id)).status === "running");
    // No request from here on: a runs on for longer than the quiet period, and b waits its turn.
    fs.writeFileSync(path.join(ws, "go"), "");
    await until(() => idles.length > before, 5000, "onIdle once every job ended");
    // Not while a ran (it wrote a-done as its last act) or b waited: the timer counts jobs.
    for (const at of idles.slice(before)) expect(at).toBeGreaterThan(fs.statSync(path.join(ws, "a-done")).mtimeMs);
    expect((await job(b, answer.jobs[1].job_id)).status).toBe("succeeded");
  });
});
