// A node failure under running work on the Slurm driver (docs/drivers.md, "Slurm"):
// the node of the private cluster (test/support/slurm.ts) is set DOWN while an
// execution and a job run as steps on it; Slurm ends the allocation (NODE_FAIL), and
// both say so with the node named: the execution `unknown` (node_failed), the job
// `interrupted` — never an exit code the command did not give.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { describeNeeding, itNeeding } from "../support/requirements.js";
import { fileSlurmCluster, type SlurmCluster } from "../support/slurm.js";
import { EXECUTE, processesWithArg, startTestBackend, type TestBackend, uniqueSleep, until } from "./support.js";

const JOBS = "/api/v1/sandbox/default/jobs";

describeNeeding("slurm", "the Slurm driver when the node fails", () => {
  let cluster: SlurmCluster;
  let backend: TestBackend;
  let down = false;
  beforeAll(async () => {
    cluster = fileSlurmCluster();
    const dir = path.join(cluster.shared, "daemon");
    fs.mkdirSync(dir);
    backend = await startTestBackend(
      {
        drivers: {
          slurm: { partition: cluster.partition, account: null, sharedDir: cluster.shared, env: cluster.env },
        },
      },
      dir,
    );
  });

  afterAll(() => {
    // The node back, for whatever the file's cluster does after (its stop cancels every job).
    if (down) cluster.run("scontrol", ["update", `nodename=${cluster.node}`, "state=resume"]);
  });

  itNeeding("slurm", "NODE_FAIL under a running execution and job: unknown/interrupted, the node named", async () => {
    const [forExec, forJob] = [uniqueSleep(3600), uniqueSleep(3600)];
    const answer = backend.api("POST", EXECUTE, { body: { command: ["sleep", forExec] } });
    const submitted = await backend.api("POST", JOBS, {
      body: { request_id: "node-fail-1", jobs: [{ name: "long", command: `sleep ${forJob}` }] },
    });
    expect(submitted.status, submitted.text).toBe(201);
    const jobId = submitted.json.jobs[0].job_id as string;
    await until(
      () => processesWithArg(forExec).length > 0 && processesWithArg(forJob).length > 0,
      60_000,
      "both commands to run on the node",
    );
    const allocation = (await backend.api("GET", "/api/v1/sandbox/default")).json.driver.slurm.job_id as string;

    down = true;
    const set = cluster.run("scontrol", ["update", `nodename=${cluster.node}`, "state=down", "reason=sbx-test"]);
    expect(set.status, set.stderr).toBe(0);

    const record = ((await answer) as { json: Record<string, unknown> }).json;
    expect(record).toMatchObject({ outcome: "unknown", exit_code: null, signal: null, system_error: "node_failed" });
    expect(record.stderr).toMatch(new RegExp(`job ${allocation}\\) is NODE_FAIL.* on node ${cluster.node}`));
    const job = await until(
      async () => {
        const j = (await backend.api("GET", `${JOBS}/${jobId}?wait_ms=5000`)).json;
        return ["queued", "waiting", "running", "cancel_requested"].includes(j.status) ? undefined : j;
      },
      60_000,
      "the job to end",
    );
    expect(job).toMatchObject({ status: "interrupted", exit_code: null });
    expect(job.error).toMatch(new RegExp(`NODE_FAIL.* on node ${cluster.node}`));
  });
});
