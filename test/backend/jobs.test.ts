// Jobs against the real backend on a real socket: dependencies and policies, queue
// keys across requests, the concurrency limit, idempotent admission, cancel with
// dependents, timeouts, output chunks within a budget, and what a main process left
// behind. Jobs that must stay running wait for a file the test creates: no timing.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { backendsPerTest, groupAlive, type TestBackend, until, untilExecd, workspaceOf } from "./support.js";

const JOBS = "/api/v1/sandbox/default/jobs";
// Job semantics (leftovers named, host pids) are checked without isolation; the
// bwrap run of jobs has its own tests in jobs-bwrap.test.ts.
const started = backendsPerTest("none");

/** A shell command that runs until the file `name` exists in the workspace. */
const holdUntil = (name: string) => `while [ ! -e ${name} ]; do sleep 0.02; done`;

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
type Json = any;

async function submit(b: TestBackend, body: unknown): Promise<Json> {
  const res = await b.api("POST", JOBS, { body });
  expect(res.status, res.text).toBe(201);
  return res.json;
}

async function getJob(b: TestBackend, id: string, query = ""): Promise<Json> {
  const res = await b.api("GET", `${JOBS}/${id}${query}`);
  expect(res.status, res.text).toBe(200);
  return res.json;
}

/** Reads the job with server-side waits until it has ended. */
async function ended(b: TestBackend, id: string): Promise<Json> {
  return until(
    async () => {
      const job = await getJob(b, id, "?wait_ms=5000&output_limit=0");
      return job.wait_timeout
        ? undefined
        : ["queued", "waiting", "running", "cancel_requested"].includes(job.status)
          ? undefined
          : job;
    },
    30_000,
    `job ${id} to end`,
  );
}

async function statusOf(b: TestBackend, id: string): Promise<string> {
  return (await getJob(b, id, "?output_limit=0")).status;
}

function idsByName(answer: Json): Record<string, string> {
  return Object.fromEntries(answer.jobs.map((j: Json) => [j.name, j.job_id]));
}

/** The kept output of a job, both streams in order, as text. */
async function outputOf(b: TestBackend, id: string): Promise<string> {
  let after = 0;
  let text = "";
  for (;;) {
    const job = await getJob(b, id, `?after_seq=${after}`);
    if (job.output.length === 0) return text;
    for (const c of job.output) text += Buffer.from(c.data, "base64").toString();
    after = job.output_next_seq;
  }
}

describe("a pipeline with a failing step", () => {
  it("marks the dependent dependency_failed and still runs an all_terminal cleanup", async () => {
    const b = await started();
    const answer = await submit(b, {
      request_id: "ci-1",
      jobs: [
        { name: "build", command: "echo built > artifact" },
        { name: "test", command: "echo testing; exit 3", depends_on: ["build"] },
        { name: "deploy", command: "echo deployed > deployed", depends_on: ["test"] },
        {
          name: "cleanup",
          command: "rm artifact; echo cleaned",
          depends_on: ["test", "deploy"],
          dependency_policy: "all_terminal",
        },
      ],
    });
    expect(answer).toMatchObject({
      request_id: "ci-1",
      jobs: [{ name: "build" }, { name: "test" }, { name: "deploy" }, { name: "cleanup" }],
    });
    const ids = idsByName(answer);
    const cleanup = await ended(b, ids.cleanup!);
    expect(cleanup).toMatchObject({
      status: "succeeded",
      exit_code: 0,
      depends_on: ["test", "deploy"],
      dependency_policy: "all_terminal",
    });
    expect(await ended(b, ids.build!)).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(await ended(b, ids.test!)).toMatchObject({ status: "failed", exit_code: 3, error: null });
    expect(await ended(b, ids.deploy!)).toMatchObject({
      status: "dependency_failed",
      exit_code: null,
      started_at: null,
      error: 'not run: dependency "test" ended failed',
    });
    expect(await outputOf(b, ids.test!)).toBe("testing\n");
    expect(await outputOf(b, ids.cleanup!)).toBe("cleaned\n");
    const ws = await workspaceOf(b);
    expect(fs.existsSync(path.join(ws, "deployed"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "artifact"))).toBe(false);
    // The list carries every job of the request, without output.
    const listed = (await b.api("GET", `${JOBS}?request_id=ci-1`)).json;
    expect(listed.jobs.map((j: Json) => [j.name, j.status])).toEqual([
      ["build", "succeeded"],
      ["test", "failed"],
      ["deploy", "dependency_failed"],
      ["cleanup", "succeeded"],
    ]);
    expect(listed.jobs[0]).not.toHaveProperty("output");
    const failed = (await b.api("GET", `${JOBS}?status=failed`)).json;
    expect(failed.jobs.map((j: Json) => j.name)).toEqual(["test"]);
  });

  it("runs in the sandbox's workspace with a clean environment plus the job's own", async () => {
    const b = await started();
    const answer = await submit(b, {
      request_id: "env-1",
      jobs: [
        {
          name: "env",
          command: "pwd; echo $HOME; echo $SBX_JOB_ID $SBX_SANDBOX_ID; echo $K; echo ${USER:-none}; cat",
          env: { K: "v" },
          stdin: Buffer.from("from stdin\n").toString("base64"),
        },
      ],
    });
    const id = answer.jobs[0].job_id;
    const job = await ended(b, id);
    const ws = fs.realpathSync(await workspaceOf(b));
    expect(await outputOf(b, id)).toBe(`${ws}\n${ws}\n${id} ${job.sandbox_id}\nv\nnone\nfrom stdin\n`);
  });
});

describe("queue keys and the concurrency limit", () => {
  it("two jobs with one queue key never overlap, and a second request's job waits behind the first's", async () => {
    const b = await started();
    const ws = await workspaceOf(b);
    const step = (n: string) => `echo start ${n} >> trace; ${holdUntil(`go-${n}`)}; echo end ${n} >> trace`;
    const first = await submit(b, {
      request_id: "deploy-1",
      jobs: [
        { name: "a", command: step("a"), queue_key: "prod" },
        { name: "b", command: step("b"), queue_key: "prod" },
      ],
    });
    const second = await submit(b, {
      request_id: "deploy-2",
      jobs: [{ name: "c", command: step("c"), queue_key: "prod" }],
    });
    const [a, bb] = [first.jobs[0].job_id, first.jobs[1].job_id];
    const c = second.jobs[0].job_id;
    await until(() => fs.existsSync(path.join(ws, "trace")), 10_000, "a to start");
    expect([await statusOf(b, a), await statusOf(b, bb), await statusOf(b, c)]).toEqual([
      "running",
      "queued",
      "queued",
    ]);
    fs.writeFileSync(path.join(ws, "go-a"), "");
    await until(async () => (await statusOf(b, bb)) === "running", 10_000, "b to start");
    expect(await statusOf(b, c)).toBe("queued");
    fs.writeFileSync(path.join(ws, "go-b"), "");
    fs.writeFileSync(path.join(ws, "go-c"), "");
    const done = [await ended(b, a), await ended(b, bb), await ended(b, c)];
    expect(done.map((j) => j.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    for (let i = 1; i < done.length; i++) {
      expect(Date.parse(done[i].started_at)).toBeGreaterThanOrEqual(Date.parse(done[i - 1].finished_at));
    }
    expect(fs.readFileSync(path.join(ws, "trace"), "utf8")).toBe("start a\nend a\nstart b\nend b\nstart c\nend c\n");
  });

  it("runs at most the daemon's limit at once per sandbox; the rest wait as queued, never refused", async () => {
    const b = await started({ jobConcurrency: 2 });
    const ws = await workspaceOf(b);
    const answer = await submit(b, {
      request_id: "wide",
      jobs: ["x", "y", "z"].map((n) => ({ name: n, command: `touch started-${n}; ${holdUntil("go")}` })),
    });
    const ids = answer.jobs.map((j: Json) => j.job_id);
    await until(() => fs.existsSync(path.join(ws, "started-x")) && fs.existsSync(path.join(ws, "started-y")), 10_000);
    expect(await Promise.all(ids.map((id: string) => statusOf(b, id)))).toEqual(["running", "running", "queued"]);
    // Another sandbox has slots of its own.
    await b.api("POST", "/api/v1/sandbox/create", { body: { name: "other" } });
    const other = (
      await b.api("POST", "/api/v1/sandbox/other/jobs", {
        body: { request_id: "o", jobs: [{ name: "o", command: "true" }] },
      })
    ).json;
    expect((await b.api("GET", `/api/v1/sandbox/other/jobs/${other.jobs[0].job_id}?wait_ms=10000`)).json.status).toBe(
      "succeeded",
    );
    fs.writeFileSync(path.join(ws, "go"), "");
    for (const id of ids) expect((await ended(b, id)).status).toBe("succeeded");
  });
});

describe("idempotent admission", () => {
  it("the same request twice gives the same jobs and runs nothing again", async () => {
    const b = await started();
    const ws = await workspaceOf(b);
    const body = {
      request_id: "once",
      jobs: [
        { name: "count", command: "echo ran >> runs" },
        { name: "named", job_id: "my-job-1", command: "true" },
      ],
    };
    const first = await submit(b, body);
    expect(first.jobs[0].job_id).toMatch(/^job_[0-9a-f]{24}$/);
    expect(first.jobs[1].job_id).toBe("my-job-1");
    for (const j of first.jobs) await ended(b, j.job_id);
    const again = await b.api("POST", JOBS, { body });
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json.jobs).toEqual([
      { job_id: first.jobs[0].job_id, name: "count", status: "succeeded" },
      { job_id: "my-job-1", name: "named", status: "succeeded" },
    ]);
    expect(fs.readFileSync(path.join(ws, "runs"), "utf8")).toBe("ran\n");
    // The same request id in another sandbox is another submission.
    await b.api("POST", "/api/v1/sandbox/create", { body: { name: "elsewhere" } });
    const elsewhere = await b.api("POST", "/api/v1/sandbox/elsewhere/jobs", {
      body: { request_id: "once", jobs: [body.jobs[0]] },
    });
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.json.jobs[0].job_id).not.toBe(first.jobs[0].job_id);
  });

  it("refuses a job id reused with other inputs (409 job_id_conflict) and a request id reused for other jobs", async () => {
    const b = await started();
    await submit(b, { request_id: "r1", jobs: [{ name: "a", job_id: "fixed", command: "true" }] });
    const reused = await b.api("POST", JOBS, {
      body: { request_id: "r2", jobs: [{ name: "a", job_id: "fixed", command: "false" }] },
    });
    expect(reused.status).toBe(409);
    expect(reused.json.error).toMatchObject({
      code: "job_id_conflict",
      details: { job_id: "fixed", name: "a", index: 0, existing_request_id: "r1" },
    });
    expect(reused.json.error.message).toContain("jobs[0] (a): job_id fixed already names a job with other inputs");
    // A changed command under the same request id changes a derived id's inputs.
    await submit(b, { request_id: "r3", jobs: [{ name: "a", command: "true" }] });
    const changed = await b.api("POST", JOBS, {
      body: { request_id: "r3", jobs: [{ name: "a", command: "echo other" }] },
    });
    expect([changed.status, changed.json.error.code]).toEqual([409, "job_id_conflict"]);
    const grown = await b.api("POST", JOBS, {
      body: {
        request_id: "r3",
        jobs: [
          { name: "a", command: "true" },
          { name: "b", command: "true" },
        ],
      },
    });
    expect([grown.status, grown.json.error.code]).toEqual([409, "request_id_conflict"]);
    // Nothing of the refused submissions was admitted.
    expect((await b.api("GET", `${JOBS}?request_id=r2`)).json.jobs).toEqual([]);
    expect((await b.api("GET", `${JOBS}?request_id=r3`)).json.jobs).toHaveLength(1);
  });

  it("refuses cycles and unknown dependency names with 400, naming them, and admits nothing", async () => {
    const b = await started();
    const cycle = await b.api("POST", JOBS, {
      body: {
        request_id: "bad",
        jobs: [
          { name: "a", command: "true", depends_on: ["b"] },
          { name: "b", command: "true", depends_on: ["a"] },
        ],
      },
    });
    expect(cycle.status).toBe(400);
    expect(cycle.json.error).toEqual({
      code: "invalid_request",
      message: 'dependency cycle: "a" → "b" → "a"',
      details: { field: "jobs", cycle: ["a", "b", "a"] },
    });
    const unknown = await b.api("POST", JOBS, {
      body: { request_id: "bad", jobs: [{ name: "a", command: "true", depends_on: ["nope"] }] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.details).toEqual({
      field: "jobs[0].depends_on",
      unknown: [{ job: "a", dependency: "nope" }],
    });
    expect((await b.api("GET", `${JOBS}?request_id=bad`)).json.jobs).toEqual([]);
  });

  it("honours an Idempotency-Key too: a replay answers the jobs as they are now", async () => {
    const b = await started();
    const body = { request_id: "keyed", jobs: [{ name: "a", command: "true" }] };
    const headers = { "idempotency-key": "k-1" };
    const first = await b.api("POST", JOBS, { body, headers });
    await ended(b, first.json.jobs[0].job_id);
    const replay = await b.api("POST", JOBS, { body, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json.jobs[0]).toMatchObject({ job_id: first.json.jobs[0].job_id, status: "succeeded" });
  });
});

describe("cancel", () => {
  it("a running job answers cancel_requested, its group gets TERM, and it ends cancelled; dependents follow their policy", async () => {
    const b = await started();
    const answer = await submit(b, {
      request_id: "c1",
      jobs: [
        { name: "long", command: "trap 'echo got TERM; exit 143' TERM; while true; do sleep 0.02; done" },
        { name: "next", command: "true", depends_on: ["long"] },
        { name: "always", command: "echo cleanup", depends_on: ["long"], dependency_policy: "all_terminal" },
      ],
    });
    const ids = idsByName(answer);
    await until(async () => (await statusOf(b, ids.long!)) === "running");
    const res = await b.api("POST", `${JOBS}/${ids.long}/cancel`, { body: {} });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ job_id: ids.long, status: "cancel_requested", dependents: [] });
    const long = await ended(b, ids.long!);
    expect(long).toMatchObject({ status: "cancelled", exit_code: 143 });
    expect(await outputOf(b, ids.long!)).toContain("got TERM");
    expect(await ended(b, ids.next!)).toMatchObject({ status: "dependency_failed" });
    expect(await ended(b, ids.always!)).toMatchObject({ status: "succeeded" });
    // Cancelling an ended job changes nothing.
    const again = await b.api("POST", `${JOBS}/${ids.long}/cancel`, { body: {} });
    expect(again.json).toEqual({ job_id: ids.long, status: "cancelled", dependents: [] });
  });

  it("dependents: true cancels every job depending on it, all_terminal ones too", async () => {
    const b = await started();
    const answer = await submit(b, {
      request_id: "c2",
      jobs: [
        { name: "root", command: `touch root-running; ${holdUntil("never")}` },
        { name: "mid", command: "true", depends_on: ["root"] },
        { name: "leaf", command: "true", depends_on: ["mid"], dependency_policy: "all_terminal" },
        { name: "free", command: "echo free" },
      ],
    });
    const ids = idsByName(answer);
    await until(async () => (await statusOf(b, ids.root!)) === "running");
    // Its command runs (its sandbox is set up): a cancel then ends all of it.
    const ws = await workspaceOf(b);
    await until(() => fs.existsSync(path.join(ws, "root-running")), 10_000, "root's command to run");
    const res = await b.api("POST", `${JOBS}/${ids.root}/cancel`, { body: { dependents: true } });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({
      job_id: ids.root,
      status: "cancel_requested",
      dependents: [
        { job_id: ids.mid, name: "mid", status: "cancelled" },
        { job_id: ids.leaf, name: "leaf", status: "cancelled" },
      ],
    });
    expect(await ended(b, ids.root!)).toMatchObject({ status: "cancelled", signal: "SIGTERM" });
    expect(await ended(b, ids.leaf!)).toMatchObject({
      status: "cancelled",
      error: "cancelled before it started",
      started_at: null,
    });
    expect(await ended(b, ids.free!)).toMatchObject({ status: "succeeded" });
  });

  it("a queued job is cancelled at once; unknown jobs are 404", async () => {
    const b = await started({ jobConcurrency: 1 });
    const answer = await submit(b, {
      request_id: "c3",
      jobs: [
        { name: "busy", command: holdUntil("go") },
        { name: "later", command: "true" },
      ],
    });
    const ids = idsByName(answer);
    const res = await b.api("POST", `${JOBS}/${ids.later}/cancel`, {});
    expect(res.json).toMatchObject({ status: "cancelled" });
    fs.writeFileSync(path.join(await workspaceOf(b), "go"), "");
    expect((await ended(b, ids.busy!)).status).toBe("succeeded");
    expect((await b.api("POST", `${JOBS}/job_nope/cancel`, {})).json.error.code).toBe("job_not_found");
    expect((await b.api("GET", `${JOBS}/job_nope`)).status).toBe(404);
  });
});

describe("timeouts, output and what a main process leaves behind", () => {
  it("ends a job at its timeout_ms as timed_out", async () => {
    const b = await started();
    const answer = await submit(b, {
      request_id: "t",
      jobs: [{ name: "slow", command: ["sleep", "30"], timeout_ms: 300 }],
    });
    expect(await ended(b, answer.jobs[0].job_id)).toMatchObject({
      status: "timed_out",
      signal: "SIGTERM",
      timeout_ms: 300,
      error: "killed at its timeout (300 ms)",
    });
  });

  it("keeps output as ordered chunks; past the budget the middle is omitted and counted", async () => {
    const b = await started({ jobOutputBudgetBytes: 1000 });
    const answer = await submit(b, {
      request_id: "big",
      jobs: [{ name: "big", command: "seq 1 2000; echo err >&2" }],
    });
    const id = answer.jobs[0].job_id;
    const job = await ended(b, id);
    const all = `${Array.from({ length: 2000 }, (_, i) => i + 1).join("\n")}\n`;
    const total = all.length + 4;
    expect(job).toMatchObject({ status: "succeeded", output_bytes: total });
    expect(job.output_omitted_bytes).toBeGreaterThan(total - 1000 - 1);
    expect(job.output_omitted_bytes).toBeLessThanOrEqual(total - 500);
    // Read in small pages, following output_next_seq.
    const chunks: Json[] = [];
    for (let after = 0; ; ) {
      const page = await getJob(b, id, `?after_seq=${after}&output_limit=100`);
      if (page.output.length === 0) break;
      chunks.push(...page.output);
      after = page.output_next_seq;
    }
    const seqs = chunks.map((c) => c.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    const bytes = (c: Json) => Buffer.from(c.data, "base64");
    const head = Buffer.concat(chunks.filter((c) => c.offset < 500).map(bytes)).toString();
    expect(head).toBe(all.slice(0, 500));
    // The kept tail ends with the last bytes, stderr last; the gap is exactly what was omitted.
    const last = chunks[chunks.length - 1];
    expect(last).toMatchObject({ stream: "stderr" });
    expect(bytes(last).toString()).toBe("err\n");
    const gapStart = chunks.findIndex((c) => c.offset >= 500);
    expect(chunks[gapStart].offset - 500).toBe(job.output_omitted_bytes);
    const tail = Buffer.concat(chunks.slice(gapStart, -1).map(bytes)).toString();
    expect(all.endsWith(tail)).toBe(true);
    expect((await b.api("GET", `${JOBS}/${id}?after_seq=999999`)).json.error.code).toBe("invalid_cursor");
  });

  it("kills what the main process left behind, and says so", async () => {
    const b = await started();
    const answer = await submit(b, {
      request_id: "leftovers",
      jobs: [
        // One keeps the output pipes open, one does not: both are found and killed.
        { name: "holding", command: `sleep 60 & ${untilExecd}; echo $! > holding.pid; echo main done` },
        { name: "detached", command: `sleep 61 > /dev/null 2>&1 & ${untilExecd}; echo $! > detached.pid; exit 4` },
        { name: "clean", command: "echo nothing left" },
      ],
    });
    const ids = idsByName(answer);
    const ws = await workspaceOf(b);
    expect(await ended(b, ids.holding!)).toMatchObject({
      status: "succeeded",
      exit_code: 0,
      leftover_processes: ["sleep"],
    });
    expect(await ended(b, ids.detached!)).toMatchObject({
      status: "failed",
      exit_code: 4,
      leftover_processes: ["sleep"],
    });
    expect(await ended(b, ids.clean!)).toMatchObject({ status: "succeeded", leftover_processes: [] });
    for (const f of ["holding.pid", "detached.pid"]) {
      const pid = Number(fs.readFileSync(path.join(ws, f), "utf8"));
      await until(
        () => {
          try {
            process.kill(pid, 0);
            return fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z");
          } catch {
            return true;
          }
        },
        5000,
        `${f} to be gone`,
      );
    }
    expect(b.logs.some((l) => l.includes("killed 1 process(es) its main process left behind (sleep)"))).toBe(true);
  });

  it("a command that cannot start fails like a shell would say; a missing working directory too", async () => {
    const b = await started();
    const answer = await submit(b, {
      request_id: "nostart",
      jobs: [
        { name: "missing", command: ["definitely-not-a-command-xyz"] },
        { name: "nodir", command: "true", working_dir: "/workspace/not-there" },
      ],
    });
    const ids = idsByName(answer);
    expect(await ended(b, ids.missing!)).toMatchObject({ status: "failed", exit_code: 127 });
    expect(await outputOf(b, ids.missing!)).toBe("sbx: definitely-not-a-command-xyz: command not found\n");
    expect(await ended(b, ids.nodir!)).toMatchObject({ status: "failed", exit_code: 126 });
    expect(await outputOf(b, ids.nodir!)).toBe("sbx: working directory /workspace/not-there does not exist\n");
  });
});

describe("server-side waits", () => {
  it("wait_ms returns once the job ended, or with wait_timeout; with after_seq, once output arrives", async () => {
    const b = await started();
    const ws = await workspaceOf(b);
    const answer = await submit(b, {
      request_id: "w",
      jobs: [{ name: "w", command: `echo first; ${holdUntil("go")}; echo second` }],
    });
    const id = answer.jobs[0].job_id;
    const first = await until(async () => {
      const j = await getJob(b, id, "?after_seq=0&wait_ms=5000");
      return j.output.length > 0 ? j : undefined;
    });
    expect(Buffer.from(first.output[0].data, "base64").toString()).toBe("first\n");
    const timedOut = await getJob(b, id, "?wait_ms=50&output_limit=0");
    expect(timedOut).toMatchObject({ status: "running", wait_timeout: true, output: [] });
    const listWait = await b.api("GET", `${JOBS}?request_id=w&wait_ms=50`);
    expect(listWait.json.wait_timeout).toBe(true);
    fs.writeFileSync(path.join(ws, "go"), "");
    const done = await until(async () => {
      const list = (await b.api("GET", `${JOBS}?request_id=w&wait_ms=5000`)).json;
      return list.wait_timeout ? undefined : list;
    });
    expect(done.jobs[0].status).toBe("succeeded");
    expect(
      (await getJob(b, id, `?after_seq=${first.output_next_seq}`)).output.map((c: Json) =>
        Buffer.from(c.data, "base64").toString(),
      ),
    ).toEqual(["second\n"]);
  });

  it("refuses a sandbox delete while a job is unfinished", async () => {
    const b = await started();
    await b.api("POST", "/api/v1/sandbox/create", { body: { name: "busy" } });
    const answer = (
      await b.api("POST", "/api/v1/sandbox/busy/jobs", {
        body: { request_id: "b", jobs: [{ name: "s", command: `touch running; ${holdUntil("never")}` }] },
      })
    ).json;
    const refused = await b.api("DELETE", "/api/v1/sandbox/busy");
    expect([refused.status, refused.json.error.code]).toEqual([409, "sandbox_busy"]);
    // Its command runs (its sandbox is set up): a cancel then ends all of it.
    const ws = (await b.api("GET", "/api/v1/sandbox/busy")).json.host_workspace;
    await until(() => fs.existsSync(path.join(ws, "running")), 10_000, "the job's command to run");
    await b.api("POST", `/api/v1/sandbox/busy/jobs/${answer.jobs[0].job_id}/cancel`, {});
    await until(async () => (await b.api("DELETE", "/api/v1/sandbox/busy")).status === 200);
  });
});

describe("groups end with their jobs", () => {
  it("no process of a timed-out job's group is left once it is reported", async () => {
    const b = await started();
    const answer = await submit(b, {
      request_id: "g",
      jobs: [{ name: "tree", command: "echo $$ > pgid; sleep 30 & sleep 31 & wait", timeout_ms: 300 }],
    });
    const job = await ended(b, answer.jobs[0].job_id);
    expect(job.status).toBe("timed_out");
    const pgid = Number(fs.readFileSync(path.join(await workspaceOf(b), "pgid"), "utf8"));
    expect(groupAlive(pgid)).toBe(false);
  });
});
