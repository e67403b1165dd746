// The Slurm driver (docs/drivers.md, "Slurm") on a private single-node cluster
// (test/support/slurm.ts): a sandbox is an allocation, its runs are steps in it on the
// node Slurm chose, and what cannot work on a cluster is refused saying why.

import fs from "node:fs";
import path from "node:path";
import { beforeAll, expect } from "vitest";
import { describeNeeding, itNeeding } from "../support/requirements.js";
import { fileSlurmCluster, type SlurmCluster } from "../support/slurm.js";
import { executionPath } from "./stream-support.js";
import { EXECUTE, processesWithArg, startTestBackend, type TestBackend, uniqueSleep, until } from "./support.js";

describeNeeding("slurm", "the Slurm driver", () => {
  let cluster: SlurmCluster;
  let backend: TestBackend;
  beforeAll(async () => {
    cluster = fileSlurmCluster();
    // The daemon's data directory on the shared directory: the node sees the workspaces.
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

  itNeeding("slurm", "runs an execution as a step of the sandbox's allocation, on the node Slurm chose", async () => {
    const res = await backend.api("POST", EXECUTE, {
      body: { command: ["sh", "-c", "echo out; echo err >&2; echo $SLURM_JOB_ID; exit 3"] },
    });
    expect(res.status).toBe(200);
    expect(res.json.outcome).toBe("failed");
    expect(res.json.exit_code).toBe(3);
    const out = await backend.api(
      "GET",
      `/api/v1/sandbox/default/executions/${res.json.execution_id}/output?stream=stdout`,
    );
    // env -i: nothing of Slurm's step environment reaches the command.
    expect(Buffer.from(out.json.data, "base64").toString()).toBe("out\n\n");
    const err = await backend.api(
      "GET",
      `/api/v1/sandbox/default/executions/${res.json.execution_id}/output?stream=stderr`,
    );
    expect(Buffer.from(err.json.data, "base64").toString()).toBe("err\n");
    const show = await backend.api("GET", "/api/v1/sandbox/default");
    expect(show.json.driver.isolation).toBe("slurm");
    expect(show.json.driver.slurm).toMatchObject({ state: "RUNNING", node: cluster.node, partition: "sbx" });
    const jobId = show.json.driver.slurm.job_id as string;
    const squeue = cluster.run("squeue", ["-h", "-j", jobId, "-o", "%T %N %j"]);
    expect(squeue.stdout.trim()).toMatch(new RegExp(`^RUNNING ${cluster.node} sbx-[0-9a-f]{8}-sbx_`));
    // A second execution is a step of the same allocation.
    const again = await backend.api("POST", EXECUTE, { body: { command: ["hostname", "-s"] } });
    expect(again.json.exit_code).toBe(0);
    expect((await backend.api("GET", "/api/v1/sandbox/default")).json.driver.slurm.job_id).toBe(jobId);
  });

  itNeeding("slurm", "refuses what cannot work on a cluster, saying why: --network host, --publish", async () => {
    const host = await backend.api("POST", "/api/v1/sandbox/create", { body: { name: "h", network_mode: "host" } });
    expect(host.status).toBe(400);
    expect(host.json.error.message).toMatch(/node the scheduler chooses: the daemon's host network is not there/);
    const publish = await backend.api("POST", "/api/v1/sandbox/create", {
      body: { name: "p", publish: [{ port: 8080 }] },
    });
    expect(publish.status).toBe(400);
    expect(publish.json.error.message).toMatch(/published on the daemon's machine would not reach it/);
  });

  itNeeding(
    "slurm",
    "Slurm unreachable: sandbox_start_failed, nothing submitted; the same request runs once it answers",
    async () => {
      const made = await backend.api("POST", "/api/v1/sandbox/create", { body: { name: "later" } });
      expect(made.status).toBe(201);
      const before = cluster.run("squeue", ["-h", "--states=all", "-o", "%i"]).stdout.trim().split("\n").length;
      cluster.stopController();
      try {
        const res = await backend.api("POST", "/api/v1/sandbox/later/execute", {
          body: { command: ["true"] },
          headers: { "idempotency-key": "slurm-down-1" },
        });
        expect(res.status).toBe(500);
        expect(res.json.system_error ?? res.json.error?.code).toBe("sandbox_start_failed");
        expect(JSON.stringify(res.json)).toMatch(/Slurm does not answer \(nothing was submitted\)/);
      } finally {
        cluster.startController();
      }
      const after = cluster.run("squeue", ["-h", "--states=all", "-o", "%i"]).stdout.trim().split("\n").length;
      expect(after).toBe(before);
      const res = await backend.api("POST", "/api/v1/sandbox/later/execute", { body: { command: ["true"] } });
      expect(res.json.exit_code).toBe(0);
    },
  );

  itNeeding(
    "slurm",
    "cancel ends the step on the node (scancel --signal of the step): cancelled, SIGTERM",
    async () => {
      const sleep = uniqueSleep(3600);
      const answer = backend.api("POST", EXECUTE, { body: { command: ["sleep", sleep] } });
      await until(() => processesWithArg(sleep).length > 0, 30_000, "the step's sleep to run on the node");
      const list = (await backend.api("GET", "/api/v1/sandbox/default/executions?outcome=pending")).json;
      const id = list.executions.find((e: { command: string }) => e.command.includes(sleep)).execution_id;
      const jobId = (await backend.api("GET", "/api/v1/sandbox/default")).json.driver.slurm.job_id as string;
      expect(cluster.run("squeue", ["-h", "-s", "-j", jobId, "-o", "%j"]).stdout).toMatch(/sbx-[0-9a-f]{8}-sbx_/);
      expect((await backend.api("POST", executionPath(id, "/cancel"), { body: {} })).status).toBe(202);
      const record = (await answer) as { json: Record<string, unknown> };
      expect(record.json).toMatchObject({ outcome: "cancelled", exit_code: null, signal: "SIGTERM" });
      await until(() => processesWithArg(sleep).length === 0, 30_000, "the sleep to end");
    },
  );

  itNeeding(
    "slurm",
    "queued is visible: a sandbox whose allocation waits says PENDING and Slurm's reason",
    async () => {
      // The allocations of the tests before end (sandbox stop: scancel); then one sandbox
      // takes every CPU of the one node, and the next waits for Resources.
      for (const name of ["default", "later"]) {
        // (404: that test did not run in this file's run)
        expect([200, 404]).toContain((await backend.api("POST", `/api/v1/sandbox/${name}/stop`, { body: {} })).status);
      }
      const cpus = Number(cluster.run("sinfo", ["-h", "-o", "%c"]).stdout.trim());
      for (const name of ["big", "waits"]) {
        const made = await backend.api("POST", "/api/v1/sandbox/create", {
          body: { name, limits: { cpus, memory_bytes: 64 * 1024 ** 2 } },
        });
        expect(made.status).toBe(201);
      }
      expect((await backend.api("POST", "/api/v1/sandbox/big/start", { body: {} })).status).toBe(200);
      const waiting = backend.api("POST", "/api/v1/sandbox/waits/execute", { body: { command: ["true"] } });
      const pending = await until(
        async () => {
          const show = (await backend.api("GET", "/api/v1/sandbox/waits")).json;
          return show.driver.slurm?.state === "PENDING" && show.driver.slurm.reason !== null ? show : undefined;
        },
        30_000,
        "the second allocation to be pending",
      );
      expect(pending.driver.slurm).toMatchObject({ state: "PENDING", reason: "Resources", node: null });
      expect(pending.environment.state).toBe("starting");
      // Once the first is stopped (scancel), Slurm runs the second, and the execution with it.
      expect((await backend.api("POST", "/api/v1/sandbox/big/stop", { body: {} })).status).toBe(200);
      expect(((await waiting) as { json: { exit_code: number } }).json.exit_code).toBe(0);
    },
  );
});
