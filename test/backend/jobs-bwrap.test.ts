// Jobs run through the same sandbox driver as executions and processes: in a bwrap
// sandbox a job sees its sandbox's /workspace and nothing else of the host, is
// cancelled and timed out as a whole, and what its main process leaves behind ends
// with it (the sandbox's pid namespace); a crash leaves it interrupted.

import fs from "node:fs";
import { expect, it } from "vitest";
import { backendsPerTest, processesWithArg, type TestBackend, uniqueSleep, until } from "./support.js";
import { describeNeeding } from "../support/requirements.js";

const JOBS = "/api/v1/sandbox/default/jobs";
const started = backendsPerTest("bwrap");

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
type Json = any;

async function submit(b: TestBackend, jobs: unknown[]): Promise<string[]> {
  const res = await b.api("POST", JOBS, { body: { request_id: `r-${Math.random()}`, jobs } });
  expect(res.status, res.text).toBe(201);
  return res.json.jobs.map((j: Json) => j.job_id);
}

async function ended(b: TestBackend, id: string): Promise<Json> {
  return until(
    async () => {
      const j = (await b.api("GET", `${JOBS}/${id}?wait_ms=5000`)).json;
      return ["queued", "waiting", "running", "cancel_requested"].includes(j.status) ? undefined : j;
    },
    30_000,
    `job ${id} to end`,
  );
}

const text = (job: Json) => job.output.map((c: Json) => Buffer.from(c.data, "base64").toString()).join("");

describeNeeding("bwrap", "jobs in a bwrap sandbox", () => {
  it("see /workspace, a clean environment, and nothing else of the host", async () => {
    const b = await started();
    fs.writeFileSync(`${(await b.api("GET", "/api/v1/sandbox/default")).json.host_workspace}/input.txt`, "in\n");
    const [id] = await submit(b, [
      {
        name: "look",
        command:
          "pwd; echo $HOME $SBX_WORKSPACE $SBX_JOB_ID; cat input.txt; cat /etc/shadow || echo no-shadow; ls /root || echo no-root",
      },
    ]);
    const job = await ended(b, id!);
    expect(job.status).toBe("succeeded");
    expect(text(job)).toContain(`/workspace\n/workspace /workspace ${id}\nin\n`);
    expect(text(job)).toContain("no-shadow\n");
    expect(text(job)).toContain("no-root\n");
  });

  it("are cancelled and timed out as a whole", async () => {
    const b = await started({ killGraceMs: 300 });
    const [a, c] = [uniqueSleep(), uniqueSleep()];
    const [cancelled, timedOut] = await submit(b, [
      { name: "cancel-me", command: `trap 'echo got TERM; exit 143' TERM; sleep ${a} & wait` },
      { name: "time-me", command: `sleep ${c} & sleep ${c}; wait`, timeout_ms: 500 },
    ]);
    await until(() => processesWithArg(a).length === 1, 5000, "the job to run");
    expect((await b.api("POST", `${JOBS}/${cancelled}/cancel`, { body: {} })).status).toBe(202);
    const c1 = await ended(b, cancelled!);
    expect(c1.status).toBe("cancelled");
    expect(text(c1)).toContain("got TERM");
    expect((await ended(b, timedOut!)).status).toBe("timed_out");
    expect(processesWithArg(a)).toEqual([]);
    expect(processesWithArg(c)).toEqual([]);
  });

  it("leave nothing behind: the sandbox ends what a main process left running", async () => {
    const b = await started();
    const left = uniqueSleep();
    const [id] = await submit(b, [{ name: "leaver", command: `sleep ${left} & echo main done` }]);
    const job = await ended(b, id!);
    expect(job).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(text(job)).toBe("main done\n");
    await until(() => processesWithArg(left).length === 0, 5000, "the leftover to end with its job");
  });

  it("a job running at a crash is interrupted afterwards, and nothing of it runs on", async () => {
    const first = await started();
    const sleep = uniqueSleep();
    const [id] = await submit(first, [{ name: "long", command: ["sleep", sleep] }]);
    await until(() => processesWithArg(sleep).length === 1, 5000, "the job to run");
    await first.stop({ simulateCrash: true });
    const second = await started({}, first.dir);
    expect((await second.api("GET", `${JOBS}/${id}`)).json).toMatchObject({ status: "interrupted" });
    await until(() => processesWithArg(sleep).length === 0, 5000, "its process to be ended");
  });
});
