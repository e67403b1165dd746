// The private Slurm cluster the Slurm driver's tests run on (test/support/slurm.ts): it
// starts, runs work through the real scheduler, and stops by the pids it started.

import fs from "node:fs";
import { expect } from "vitest";
import { describeNeeding, itNeeding } from "../support/requirements.js";
import { fileSlurmCluster, startSlurmCluster } from "../support/slurm.js";

describeNeeding("slurm", "a private single-node Slurm cluster", () => {
  itNeeding("slurm", "runs `srun true` on its node, and says a step's own exit code", () => {
    const cluster = fileSlurmCluster();
    const ok = cluster.run("srun", ["--partition", cluster.partition, "true"]);
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
    const where = cluster.run("srun", ["--partition", cluster.partition, "hostname", "-s"]);
    expect(where.stdout.trim()).toBe(cluster.node);
    expect(cluster.run("srun", ["--partition", cluster.partition, "sh", "-c", "exit 3"]).status).toBe(3);
  });

  itNeeding("slurm", "is unreachable once its controller stops, and reachable again when it starts", () => {
    const cluster = fileSlurmCluster();
    cluster.stopController();
    const down = cluster.run("squeue", ["-h"]);
    expect(down.status).not.toBe(0);
    expect(down.stderr).toMatch(/Unable to contact slurm controller|Connection refused/);
    cluster.startController();
    expect(cluster.run("srun", ["--partition", cluster.partition, "true"]).status).toBe(0);
  });

  itNeeding("slurm", "stops by the pids it started: none of its daemons is left", () => {
    const cluster = startSlurmCluster();
    const pidFiles = ["munge/pid", "slurmctld.pid", "slurmd.pid"].map((f) => `${cluster.dir}/${f}`);
    const pids = pidFiles.map((f) => Number(fs.readFileSync(f, "utf8").trim()));
    expect(pids.every((pid) => fs.existsSync(`/proc/${pid}`))).toBe(true);
    cluster.stop();
    const running = (pid: number) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
      } catch {
        return false;
      }
    };
    expect(pids.filter(running)).toEqual([]);
  });
});
