// A daemon restart loses nothing Slurm still runs (docs/drivers.md, "A daemon restart"):
// a real `sbx daemon run --driver slurm` is killed (SIGKILL) with two executions running
// as steps on the private cluster (test/support/slurm.ts); one ends while no daemon
// runs, the other goes on; the daemon started again gives the first its real exit code
// and output, and follows the second to its end.

import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { resolvePaths } from "../../src/config/paths.js";
import { sbxEnv } from "../support/cli.js";
import { startForegroundDaemon, stopForegroundDaemon } from "../support/daemon.js";
import { describeNeeding, itNeeding } from "../support/requirements.js";
import { fileSlurmCluster, type SlurmCluster } from "../support/slurm.js";
import { type Api, socketClient, until } from "./support.js";

const EXECUTIONS = "/api/v1/sandbox/default/executions";

describeNeeding("slurm", "the Slurm driver across a daemon restart", () => {
  let cluster: SlurmCluster;
  let home: string;
  let daemon: ChildProcess | null = null;
  let client: { api: Api; close(): Promise<void> } | null = null;

  const start = async (): Promise<Api> => {
    daemon = await startForegroundDaemon(
      home,
      ["--driver", "slurm", "--slurm-shared-dir", cluster.shared, "--slurm-partition", cluster.partition],
      { env: sbxEnv(home, cluster.env) },
    );
    client = socketClient(resolvePaths({ SBX_HOME: home }).socketPath);
    return client.api;
  };

  beforeAll(() => {
    cluster = fileSlurmCluster();
    // SBX_HOME (and so the workspaces) on the shared directory: the node sees them.
    home = path.join(cluster.shared, "home");
    fs.mkdirSync(home);
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    if (daemon !== null) await stopForegroundDaemon(daemon);
  });

  const output = async (api: Api, id: string, stream: "stdout" | "stderr"): Promise<string> => {
    const res = await api("GET", `${EXECUTIONS}/${id}/output?stream=${stream}`);
    return Buffer.from(res.json.data, "base64").toString();
  };

  itNeeding(
    "slurm",
    "killed with two steps running: the one that ended meanwhile gets its real exit code, the other is followed to its end",
    async () => {
      let api = await start();
      const workspace = (await api("GET", "/api/v1/sandbox/default")).json.host_workspace as string;
      const waitFor = (file: string, then: string) =>
        `echo before; while [ ! -e ${file} ]; do sleep 0.1; done; ${then}`;
      // Not awaited: each answer comes when its command ends, and the daemon is killed first.
      for (const command of [
        waitFor("go-ended", "echo after; echo err >&2; exit 7"),
        waitFor("go-running", "echo still; exit 0"),
      ]) {
        void api("POST", "/api/v1/sandbox/default/execute", { body: { command } }).catch(() => {});
      }
      const ids = await until(
        async () => {
          const list = (await api("GET", `${EXECUTIONS}?outcome=pending`)).json.executions as Array<{
            execution_id: string;
            command: string;
          }>;
          const ended = list.find((e) => e.command.includes("go-ended"))?.execution_id;
          const running = list.find((e) => e.command.includes("go-running"))?.execution_id;
          if (ended === undefined || running === undefined) return undefined;
          // Both commands run on the node: their first line reached the daemon.
          for (const id of [ended, running]) if ((await output(api, id, "stdout")) !== "before\n") return undefined;
          return { ended, running };
        },
        60_000,
        "both executions to run on the node",
      );
      const jobId = (await api("GET", "/api/v1/sandbox/default")).json.driver.slurm.job_id as string;
      const steps = () => cluster.run("squeue", ["-h", "-s", "-j", jobId, "-o", "%j"]).stdout.trim().split("\n");
      expect(steps().filter((s) => s.includes(ids.ended) || s.includes(ids.running))).toHaveLength(2);

      const killed = new Promise((resolve) => daemon?.once("exit", resolve));
      daemon?.kill("SIGKILL");
      await killed;
      daemon = null;
      await client?.close().catch(() => {});
      // While no daemon runs, the first command ends: its step leaves Slurm's list.
      fs.writeFileSync(path.join(workspace, "go-ended"), "");
      await until(() => !steps().some((s) => s.includes(ids.ended)), 60_000, "the first step to end");
      expect(steps().some((s) => s.includes(ids.running))).toBe(true);

      api = await start();
      const first = await until(
        async () => {
          const rec = (await api("GET", `${EXECUTIONS}/${ids.ended}`)).json;
          return rec.outcome === "pending" ? undefined : rec;
        },
        60_000,
        "the first execution's end to be read back",
      );
      expect(first).toMatchObject({ outcome: "failed", exit_code: 7, signal: null, stdout: "before\nafter\n" });
      expect(first.stderr).toBe("err\n");
      expect(first.recovery).toMatch(/followed again after a restart/);
      expect(await output(api, ids.ended, "stdout")).toBe("before\nafter\n");
      expect(await output(api, ids.ended, "stderr")).toBe("err\n");

      // The second still runs, followed: pending until its command ends, then its own end.
      expect((await api("GET", `${EXECUTIONS}/${ids.running}`)).json.outcome).toBe("pending");
      fs.writeFileSync(path.join(workspace, "go-running"), "");
      const second = await until(
        async () => {
          const rec = (await api("GET", `${EXECUTIONS}/${ids.running}`)).json;
          return rec.outcome === "pending" ? undefined : rec;
        },
        60_000,
        "the second execution to be followed to its end",
      );
      expect(second).toMatchObject({ outcome: "succeeded", exit_code: 0, stdout: "before\nstill\n" });
      expect(await output(api, ids.running, "stdout")).toBe("before\nstill\n");
      // Its event log ends complete, as an execution's that never left the daemon.
      const events = (await api("GET", `${EXECUTIONS}/${ids.running}/events`)).json;
      const last = events.events[events.events.length - 1];
      expect(last).toMatchObject({ type: "end", data: { state: "complete" } });
    },
  );
});
