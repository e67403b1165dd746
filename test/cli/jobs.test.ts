// sbx jobs, in-process through main() against the real backend on a real socket:
// exit codes of submit --wait, wait and run; refused submissions (125, naming why);
// idempotent resubmission; the --json key sets; and recover of a submission whose
// answer was lost in flight, by request id, never by submitting again.

import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import type { BackendOptions } from "../../src/backend/backend.js";
import { backendsPerTest, type TestBackend, until, workspaceOf } from "../backend/support.js";
import { makeHome, removeHome } from "../support/cli.js";

// The contracts. Changing a field list here is changing the documented interface.
const JOB_SUMMARY_FIELDS = [
  "job_id",
  "request_id",
  "sandbox_id",
  "name",
  "status",
  "command",
  "working_dir",
  "timeout_ms",
  "depends_on",
  "dependency_policy",
  "queue_key",
  "exit_code",
  "signal",
  "error",
  "end_reason",
  "leftover_processes",
  "created_at",
  "started_at",
  "finished_at",
  "output_bytes",
  "output_omitted_bytes",
  "usage",
];
const JOB_RECORD_FIELDS = [...JOB_SUMMARY_FIELDS, "output", "output_next_seq"];
const CHUNK_FIELDS = ["seq", "stream", "offset", "data"];
const SUBMISSION_FIELDS = [
  "receipt_id",
  "request_id",
  "sandbox_id",
  "classification",
  "error",
  "jobs",
  "already_admitted",
  "waited",
  "timed_out",
  "exit",
];
const RUN_FIELDS = [...SUBMISSION_FIELDS, "stdout", "stderr"];
const WAIT_FIELDS = ["jobs", "timed_out", "exit"];
const CANCEL_FIELDS = ["job_id", "status", "dependents"];

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

const keys = (v: unknown) => Object.keys(v as object).sort();

let home: string;
beforeEach(() => {
  home = makeHome("sbx-jobs-cli-");
});
afterEach(() => removeHome(home));
const backend = backendsPerTest();

async function setup(opts: Partial<BackendOptions> = {}): Promise<{ b: TestBackend; ws: string }> {
  const b = await backend(opts);
  return { b, ws: await workspaceOf(b) };
}

async function sbx(b: TestBackend, argv: string[], stdin?: string) {
  const io = createBufferIO(stdin === undefined ? {} : { stdin });
  const code = await main(argv, io, { SBX_HOME: home, SBX_API_URL: `unix:${b.socketPath}` });
  return { code, out: io.stdoutText(), err: io.stderrText() };
}

function writeFile(name: string, doc: unknown): string {
  const file = path.join(home, name);
  fs.writeFileSync(file, JSON.stringify(doc));
  return file;
}

const hold = (name: string) => `while [ ! -e ${name} ]; do sleep 0.02; done`;

describe("sbx jobs submit --wait", () => {
  it("a CI file with a failing step: exit 1, the dependent dependency_failed, the all_terminal cleanup ran", async () => {
    const { b, ws } = await setup();
    const file = writeFile("ci.json", {
      request_id: "ci-1",
      jobs: [
        { name: "build", command: "echo built > artifact" },
        { name: "test", command: "exit 2", depends_on: ["build"] },
        { name: "deploy", command: "touch deployed", depends_on: ["test"] },
        { name: "cleanup", command: "rm artifact", depends_on: ["deploy"], dependency_policy: "all_terminal" },
      ],
    });
    const r = await sbx(b, ["jobs", "submit", file, "--wait"]);
    expect(r.code, r.err).toBe(1);
    const rows = r.out
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => l.split("\t"));
    expect(rows.map((c) => [c[1], c[2], c[3]])).toEqual([
      ["build", "succeeded", "0"],
      ["test", "failed", "2"],
      ["deploy", "dependency_failed", "-"],
      ["cleanup", "succeeded", "0"],
    ]);
    expect(rows[2]![6]).toBe('not run: dependency "test" ended failed');
    expect(fs.existsSync(path.join(ws, "deployed"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "artifact"))).toBe(false);
  });

  it("--json: the submission document, every job a summary; 0 when every job succeeded", async () => {
    const { b } = await setup();
    const r = await sbx(
      b,
      ["jobs", "submit", "-", "--wait", "--json"],
      JSON.stringify({ jobs: [{ name: "a", command: "true" }] }),
    );
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out);
    expect(keys(doc)).toEqual([...SUBMISSION_FIELDS].sort());
    expect(doc).toMatchObject({ classification: "admitted", waited: true, timed_out: false, exit: 0, error: null });
    expect(doc.request_id).toMatch(/^sbx-req-/);
    expect(r.err).toContain(`sbx: request id ${doc.request_id} (fresh; kept in receipt ${doc.receipt_id})`);
    for (const j of doc.jobs) expect(keys(j)).toEqual([...JOB_SUMMARY_FIELDS].sort());
    expect(doc.jobs[0]).toMatchObject({ name: "a", status: "succeeded", exit_code: 0 });
    // The receipt holds the request id as its idempotency identity and the body as sent.
    const receipt = JSON.parse((await sbx(b, ["receipts", "show", doc.receipt_id, "--json"])).out);
    expect(receipt).toMatchObject({
      kind: "jobs_submit",
      idempotency_key: doc.request_id,
      request_id: doc.request_id,
      execution_id: null,
      process_id: null,
      classification: "admitted",
      request: { method: "POST", path: "/api/v1/sandbox/default/jobs", body: { request_id: doc.request_id } },
    });
    // The job's end is an observation of its own.
    expect(receipt.observations.filter((o: Json) => o.job_id !== null)).toEqual([
      expect.objectContaining({ job_id: doc.jobs[0].job_id, outcome: "succeeded", exit_code: 0 }),
    ]);
  });

  it("a failed job leaves its submission's receipt admitted (not succeeded), each job's end observed", async () => {
    const { b } = await setup();
    const r = await sbx(
      b,
      ["jobs", "submit", "-", "--wait", "--json"],
      JSON.stringify({
        request_id: "ci-1",
        jobs: [
          { name: "ok", command: "true" },
          { name: "bad", command: "exit 7" },
        ],
      }),
    );
    expect(r.code, r.err).toBe(1);
    const doc = JSON.parse(r.out);
    expect(doc).toMatchObject({ classification: "admitted", exit: 1 });
    const receipt = JSON.parse((await sbx(b, ["receipts", "show", doc.receipt_id, "--json"])).out);
    expect(receipt).toMatchObject({ classification: "admitted", may_have_run: true, exit: 0 });
    const ends = receipt.observations.filter((o: Json) => o.job_id !== null);
    const nameOf = (id: string) => doc.jobs.find((j: Json) => j.job_id === id).name;
    expect(ends.map((o: Json) => [nameOf(o.job_id), o.outcome, o.exit_code]).sort()).toEqual([
      ["bad", "failed", 7],
      ["ok", "succeeded", 0],
    ]);
    const listed = await sbx(b, ["receipts", "list"]);
    expect(listed.out).toMatch(new RegExp(`${doc.receipt_id}\tadmitted\t0\t`));
    // Every job ended: nothing for recover to do.
    const recovered = await sbx(b, ["recover", "--json"]);
    expect(recovered.code, recovered.err).toBe(0);
    expect(JSON.parse(recovered.out)).toEqual({ resolved: [], running: [], in_doubt: [] });
  });

  it("without --wait the receipt is admitted; recover reads the jobs, running until they all ended", async () => {
    const { b, ws } = await setup();
    const r = await sbx(
      b,
      ["jobs", "submit", "-", "--json"],
      JSON.stringify({ request_id: "nw-1", jobs: [{ name: "held", command: hold("go") }] }),
    );
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc).toMatchObject({ classification: "admitted", waited: false });
    const going = JSON.parse((await sbx(b, ["recover", "--json"])).out);
    expect(going.running).toEqual([expect.objectContaining({ receipt_id: doc.receipt_id, now: "admitted" })]);
    expect(going.in_doubt).toEqual([]);
    fs.writeFileSync(path.join(ws, "go"), "");
    await sbx(b, ["jobs", "wait", "--request", "nw-1"]);
    const done = await sbx(b, ["recover", "--json"]);
    expect(done.code, done.err).toBe(0);
    expect(JSON.parse(done.out)).toMatchObject({
      resolved: [expect.objectContaining({ receipt_id: doc.receipt_id, now: "admitted", resolved: true })],
      running: [],
      in_doubt: [],
    });
  });

  it("--timeout stops the waiting with 124 and cancels nothing", async () => {
    const { b, ws } = await setup();
    const r = await sbx(
      b,
      ["jobs", "submit", "-", "--wait", "--timeout", "200ms", "--json"],
      JSON.stringify({
        request_id: "slow",
        jobs: [{ name: "slow", command: hold("go") }],
      }),
    );
    expect(r.code).toBe(124);
    const doc = JSON.parse(r.out);
    expect(doc).toMatchObject({ timed_out: true, exit: 124, jobs: [{ status: "running" }] });
    expect(r.err).toContain("the jobs keep running");
    fs.writeFileSync(path.join(ws, "go"), "");
    const waited = await sbx(b, ["jobs", "wait", "--request", "slow"]);
    expect(waited.code).toBe(0);
    expect(waited.out).toContain("\tslow\tsucceeded\t0\t");
  });

  it("a backend lost right after the submission (its first read of the jobs dropped) is read again, not 75", async () => {
    // The submission reached the backend, so a restart before the first read of the
    // jobs is read through, as one during the waiting is (a kill -9 at that moment
    // under load made a waiting submit exit 75, "safe to read again", at once).
    const { b } = await setup({ faults: "jobs.get:drop:once" });
    const r = await sbx(
      b,
      ["jobs", "submit", "-", "--wait", "--json"],
      JSON.stringify({ request_id: "dropped-read", jobs: [{ name: "a", command: "true" }] }),
    );
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain("reading again");
    expect(JSON.parse(r.out)).toMatchObject({ exit: 0, jobs: [{ name: "a", status: "succeeded" }] });
    // jobs run follows its job's output the same way.
    const again = await setup({ faults: "jobs.get:drop:once" });
    const run = await sbx(again.b, ["jobs", "run", "--", "echo", "ran-once"]);
    expect(run.code, run.err).toBe(0);
    expect(run.err).toContain("reading again");
    expect(run.out).toBe("ran-once\n");
  });

  it("without --wait prints the admitted jobs and how to follow them", async () => {
    const { b } = await setup();
    const r = await sbx(b, [
      "jobs",
      "submit",
      writeFile("one.json", { request_id: "r-1", jobs: [{ name: "x", command: "true" }] }),
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^JOB\tNAME\tSTATUS/);
    expect(r.err).toContain("follow it: sbx jobs wait --request r-1");
  });
});

describe("refused submissions and idempotency", () => {
  it("the same request twice gives the same job ids and runs nothing again", async () => {
    const { b, ws } = await setup();
    const file = writeFile("once.json", { request_id: "once", jobs: [{ name: "count", command: "echo ran >> runs" }] });
    const first = JSON.parse((await sbx(b, ["jobs", "submit", file, "--wait", "--json"])).out);
    const second = await sbx(b, ["jobs", "submit", file, "--wait", "--json"]);
    expect(second.code).toBe(0);
    const doc = JSON.parse(second.out);
    expect(doc.jobs.map((j: Json) => j.job_id)).toEqual(first.jobs.map((j: Json) => j.job_id));
    expect(doc.receipt_id).not.toBe(first.receipt_id);
    expect(fs.readFileSync(path.join(ws, "runs"), "utf8")).toBe("ran\n");
    expect(first.already_admitted).toBe(false);
    expect(doc.already_admitted).toBe(true);
  });

  it("says a resubmitted request was already admitted, not admitted again", async () => {
    const { b } = await setup();
    const jobs = [
      { name: "build", command: "true" },
      { name: "test", command: "true", depends_on: ["build"] },
    ];
    const file = writeFile("ci-bin.json", { request_id: "ci-bin-1", jobs });
    const first = await sbx(b, ["jobs", "submit", file]);
    expect(first.code).toBe(0);
    expect(first.err).toContain("sbx: request ci-bin-1 admitted (receipt rcp_");
    expect(first.err).not.toContain("already");
    const again = await sbx(b, ["jobs", "submit", file]);
    expect(again.code).toBe(0);
    expect(again.err).toMatch(/^sbx: request ci-bin-1 already admitted: 2 jobs, nothing new \(receipt rcp_\w+\)$/m);
    expect(again.err).not.toContain("ci-bin-1 admitted");
    expect(again.err).toContain("follow it: sbx jobs wait --request ci-bin-1");
  });

  it("a job id reused with other inputs exits 125 naming job_id_conflict and the job", async () => {
    const { b } = await setup();
    await sbx(b, [
      "jobs",
      "submit",
      writeFile("a.json", { request_id: "a", jobs: [{ job_id: "deploy-42", name: "d", command: "true" }] }),
    ]);
    const r = await sbx(b, [
      "jobs",
      "submit",
      writeFile("b.json", { request_id: "b", jobs: [{ job_id: "deploy-42", name: "d", command: "false" }] }),
      "--wait",
    ]);
    expect(r.code).toBe(125);
    expect(r.out).toBe("");
    expect(r.err).toContain(
      "refused by the backend (HTTP 409 job_id_conflict: jobs[0] (d): job_id deploy-42 already names",
    );
    expect(r.err).toContain("nothing ran");
  });

  it("a cycle or an unknown dependency is refused before anything is sent (125)", async () => {
    const { b } = await setup();
    const cycle = await sbx(b, [
      "jobs",
      "submit",
      writeFile("c.json", {
        jobs: [
          { name: "a", command: "true", depends_on: ["b"] },
          { name: "b", command: "true", depends_on: ["a"] },
        ],
      }),
    ]);
    expect(cycle.code).toBe(125);
    expect(cycle.err).toContain('dependency cycle: "a" → "b" → "a"');
    expect(cycle.err).toContain("hint: nothing was sent");
    const unknown = await sbx(
      b,
      ["jobs", "submit", "-"],
      JSON.stringify({ jobs: [{ name: "t", command: "true", depends_on: ["biuld"] }] }),
    );
    expect(unknown.code).toBe(125);
    expect(unknown.err).toContain('unknown dependency: "t" depends on "biuld"');
    const notJson = await sbx(b, ["jobs", "submit", "-"], "{nope");
    expect([notJson.code, notJson.err]).toEqual([125, expect.stringContaining("stdin is not JSON")]);
    expect((await sbx(b, ["receipts", "list", "--json"])).out.trim()).toBe("[]");
    expect(b.logs.filter((l) => l.startsWith("POST /api/v1/sandbox/default/jobs"))).toEqual([]);
  });
});

describe("recover of a submission lost in flight", () => {
  it("reads the jobs of its request id and never submits again", async () => {
    const { b } = await setup({ faults: "jobs.submit:drop:once" });
    const file = writeFile("lost.json", {
      request_id: "lost-1",
      jobs: [{ name: "only", command: "echo once >> ran" }],
    });
    const r = await sbx(b, ["jobs", "submit", file, "--wait"]);
    expect(r.code).toBe(255);
    expect(r.err).toContain("`sbx recover` reads them by request id and never submits again");
    // Once its one job ended, recover finds the submission admitted and settled.
    await sbx(b, ["jobs", "wait", "--request", "lost-1"]);
    const recovered = await sbx(b, ["recover", "--json"]);
    expect(recovered.code, recovered.err).toBe(0);
    const doc = JSON.parse(recovered.out);
    expect(doc.in_doubt).toEqual([]);
    expect(doc.resolved).toEqual([
      expect.objectContaining({ was: "outcome_unknown", now: "admitted", request_id: "lost-1", resolved: true }),
    ]);
    const posts = b.logs.filter((l) => l.startsWith("POST /api/v1/sandbox/default/jobs "));
    expect(posts).toHaveLength(1);
    expect(posts[0]).toContain("dropped");
    const listed = JSON.parse((await sbx(b, ["jobs", "list", "--request", "lost-1", "--json"])).out);
    expect(listed.jobs).toHaveLength(1);
    const ws = await workspaceOf(b);
    await sbx(b, ["jobs", "wait", listed.jobs[0].job_id]);
    expect(fs.readFileSync(path.join(ws, "ran"), "utf8")).toBe("once\n");
  });
});

describe("a submission that was not started", () => {
  it("exits 75; resubmitting the receipt sends the same request id, admitted once", async () => {
    const { b, ws } = await setup({ faults: "jobs.submit:not_started:once" });
    const file = writeFile("ns.json", { request_id: "ns-1", jobs: [{ name: "only", command: "echo once >> ran" }] });
    const r = await sbx(b, ["jobs", "submit", file, "--json"]);
    expect(r.code).toBe(75);
    const doc = JSON.parse(r.out);
    expect(doc).toMatchObject({ classification: "not_started", jobs: [], exit: 75 });
    expect(r.err).toContain("nothing ran");
    const again = await sbx(b, ["receipts", "resubmit", doc.receipt_id, "--json"]);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ classification: "admitted", request_id: "ns-1" });
    const twice = await sbx(b, ["receipts", "resubmit", doc.receipt_id, "--force"]);
    expect(twice.code).toBe(0);
    const listed = JSON.parse((await sbx(b, ["jobs", "wait", "--request", "ns-1", "--json"])).out);
    expect(listed.jobs).toHaveLength(1);
    expect(fs.readFileSync(path.join(ws, "ran"), "utf8")).toBe("once\n");
  });
});

describe("sbx jobs run", () => {
  it("passes the output through and exits like exec", async () => {
    const { b } = await setup();
    const ok = await sbx(b, ["jobs", "run", "--", "sh", "-c", "echo out; echo err >&2"]);
    expect(ok).toEqual({ code: 0, out: "out\n", err: "err\n" });
    expect((await sbx(b, ["jobs", "run", "--shell", "exit 7"])).code).toBe(7);
    expect((await sbx(b, ["jobs", "run", "--", "sh", "-c", "kill -9 $$"])).code).toBe(137);
    const slow = await sbx(b, ["jobs", "run", "--timeout", "1s", "--", "sleep", "30"]);
    expect(slow.code).toBe(124);
    expect(slow.err).toContain("ended timed_out");
    expect((await sbx(b, ["jobs", "run", "--timeout", "2h", "--", "true"])).code).toBe(125);
  });

  it("its receipt settles to the job's outcome, as an exec's", async () => {
    const { b } = await setup();
    expect((await sbx(b, ["jobs", "run", "--", "true"])).code).toBe(0);
    expect((await sbx(b, ["jobs", "run", "--shell", "exit 7"])).code).toBe(7);
    expect((await sbx(b, ["jobs", "run", "--", "sh", "-c", "kill -9 $$"])).code).toBe(137);
    expect((await sbx(b, ["jobs", "run", "--timeout", "1s", "--", "sleep", "30"])).code).toBe(124);
    const listed = JSON.parse((await sbx(b, ["receipts", "list", "--json"])).out).reverse();
    expect(listed.map((d: Json) => [d.kind, d.classification, d.exit])).toEqual([
      ["jobs_run", "succeeded", 0],
      ["jobs_run", "failed", 7],
      ["jobs_run", "failed", 137],
      ["jobs_run", "timed_out", 124],
    ]);
    expect(listed[1]).toMatchObject({ outcome: "failed", exit_code: 7, may_have_run: true });
    expect(listed[2]).toMatchObject({ signal: "SIGKILL" });
    const table = await sbx(b, ["receipts", "list"]);
    expect(table.out).toMatch(new RegExp(`${listed[1].receipt_id}\tfailed\t7\t`));
    const recovered = await sbx(b, ["recover", "--json"]);
    expect(recovered.code, recovered.err).toBe(0);
    expect(JSON.parse(recovered.out)).toEqual({ resolved: [], running: [], in_doubt: [] });
  });

  it("--json: the submission document with the job's output", async () => {
    const { b } = await setup();
    const r = await sbx(b, [
      "jobs",
      "run",
      "--json",
      "--name",
      "greet",
      "-e",
      "WHO=you",
      "--",
      "sh",
      "-c",
      "echo hi $WHO; echo warn >&2; exit 3",
    ]);
    expect(r.code).toBe(3);
    const doc = JSON.parse(r.out);
    expect(keys(doc)).toEqual([...RUN_FIELDS].sort());
    expect(doc).toMatchObject({
      classification: "failed",
      stdout: "hi you\n",
      stderr: "warn\n",
      exit: 3,
      jobs: [{ name: "greet", status: "failed", exit_code: 3 }],
    });
    expect(keys(doc.jobs[0])).toEqual([...JOB_SUMMARY_FIELDS].sort());
  });
});

describe("list, show, logs, wait, cancel", () => {
  it("each has --json with its documented keys", async () => {
    const { b, ws } = await setup();
    const submitted = JSON.parse(
      (
        await sbx(b, [
          "jobs",
          "submit",
          "--json",
          writeFile("j.json", {
            request_id: "keys",
            jobs: [
              { name: "talk", command: "echo one; echo two >&2; echo three" },
              { name: "block", command: hold("go") },
              { name: "after", command: "true", depends_on: ["block"] },
            ],
          }),
        ])
      ).out,
    );
    const [talk, block, after] = submitted.jobs.map((j: Json) => j.job_id);
    await sbx(b, ["jobs", "wait", talk]);

    const list = JSON.parse((await sbx(b, ["jobs", "list", "--request", "keys", "--json"])).out);
    expect(keys(list)).toEqual(["jobs"]);
    for (const j of list.jobs) expect(keys(j)).toEqual([...JOB_SUMMARY_FIELDS].sort());
    expect(
      JSON.parse((await sbx(b, ["jobs", "list", "--status", "waiting", "--json"])).out).jobs.map((j: Json) => j.name),
    ).toEqual(["after"]);

    const shown = JSON.parse((await sbx(b, ["jobs", "show", talk, "--json"])).out);
    expect(keys(shown)).toEqual([...JOB_RECORD_FIELDS].sort());
    for (const c of shown.output) expect(keys(c)).toEqual([...CHUNK_FIELDS].sort());
    // Two pipes: the order within each stream is kept, between them it is the order they were read.
    const streamText = (name: string) =>
      shown.output
        .filter((c: Json) => c.stream === name)
        .map((c: Json) => Buffer.from(c.data, "base64").toString())
        .join("");
    expect([streamText("stdout"), streamText("stderr")]).toEqual(["one\nthree\n", "two\n"]);
    expect(shown.output.map((c: Json) => c.seq)).toEqual(shown.output.map((_c: Json, i: number) => i + 1));
    const human = await sbx(b, ["jobs", "show", talk]);
    expect(human.out).toContain("status\tsucceeded\n");
    expect(human.out).toContain(`output\t14 bytes; sbx jobs logs ${talk}\n`);

    const logs = await sbx(b, ["jobs", "logs", talk]);
    expect([logs.out, logs.err]).toEqual(["one\nthree\n", "two\n"]);
    const logLines = (await sbx(b, ["jobs", "logs", talk, "--json"])).out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const l of logLines) expect(keys(l)).toEqual([...CHUNK_FIELDS].sort());

    const waited = await sbx(b, ["jobs", "wait", talk, block, "--timeout", "100ms", "--json"]);
    expect(waited.code).toBe(124);
    const w = JSON.parse(waited.out);
    expect(keys(w)).toEqual([...WAIT_FIELDS].sort());
    for (const j of w.jobs) expect(keys(j)).toEqual([...JOB_SUMMARY_FIELDS].sort());
    expect(w).toMatchObject({ timed_out: true, exit: 124 });

    const cancelled = await sbx(b, ["jobs", "cancel", block, "--dependents", "--json"]);
    expect(cancelled.code).toBe(0);
    const c = JSON.parse(cancelled.out);
    expect(keys(c)).toEqual([...CANCEL_FIELDS].sort());
    expect(c).toEqual({
      job_id: block,
      status: "cancel_requested",
      dependents: [{ job_id: after, name: "after", status: "cancelled" }],
    });
    expect(cancelled.err).toContain(`it is cancelled once they are gone: sbx jobs wait ${block}`);
    const end = await sbx(b, ["jobs", "wait", block, after]);
    expect(end.code).toBe(1);
    expect(end.out).toContain("\tblock\tcancelled\tSIGTERM\t");
    void ws;
  });

  it("logs -f follows a job until it ended; unknown jobs are errors", async () => {
    const { b, ws } = await setup();
    const submitted = JSON.parse(
      (
        await sbx(
          b,
          ["jobs", "submit", "--json", "-"],
          JSON.stringify({ jobs: [{ name: "f", command: `echo before; ${hold("go")}; echo after` }] }),
        )
      ).out,
    );
    const id = submitted.jobs[0].job_id;
    const following = sbx(b, ["jobs", "logs", id, "-f"]);
    await until(async () => JSON.parse((await sbx(b, ["jobs", "show", id, "--json"])).out).output.length > 0);
    fs.writeFileSync(path.join(ws, "go"), "");
    const r = await following;
    expect(r).toMatchObject({ code: 0, out: "before\nafter\n" });
    expect(r.err).toContain(`sbx: ${id} succeeded`);
    const missing = await sbx(b, ["jobs", "show", "job_nope"]);
    expect(missing.code).toBe(125);
    expect(missing.err).toContain("no job job_nope in sandbox default");
    expect((await sbx(b, ["jobs", "wait"])).code).toBe(125);
  });

  it("logs says where the middle of a long output was omitted", async () => {
    const { b } = await setup({ jobOutputBudgetBytes: 200 });
    const r = await sbx(b, ["jobs", "run", "--", "seq", "1", "1000"]);
    expect(r.code).toBe(0);
    const all = `${Array.from({ length: 1000 }, (_, i) => i + 1).join("\n")}\n`;
    expect(all.startsWith(r.out.slice(0, 100))).toBe(true);
    expect(r.err).toMatch(/^sbx: \d+ bytes of output were not kept here \(the job's output budget\)\n$/);
    const omitted = Number(/(\d+) bytes/.exec(r.err)![1]);
    expect(r.out.length + omitted).toBe(all.length);
    expect(all.endsWith(r.out.slice(100))).toBe(true);
  });
});
