// End-to-end: the built bin/sbx starts the embedded backend on demand, exactly once,
// quietly under --quiet. (What exec prints and records against it: test/cli/local-exec.)

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeHome, modeOf, removeHome, runSbx } from "../support/cli.js";
import { daemonPids, stopDaemon } from "../support/daemon.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { until } from "../support/wait.js";

describe("sbx against the auto-started local daemon", () => {
  it("starts the daemon on first use and runs argv with no shell", async (t) => {
    const home = makeHome();
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    const r = await runSbx(["exec", "--", "echo", "hello", "$HOME"], { home });
    expect(r.stdout).toBe("hello $HOME\n");
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("starting the local backend");
    const status = await runMainJson<{ running: boolean; pid: number }>(["daemon", "status", "--json"], { home });
    expect(status.doc.running).toBe(true);
    expect(modeOf(path.join(home, "daemon", "daemon.sock"))).toBe(0o600);
    expect(modeOf(path.join(home, "receipts.db"))).toBe(0o600);
  });
});

describe("daemon start-up", () => {
  it("starts exactly one daemon when several sbx processes need it at once", async () => {
    const home = makeHome();
    try {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => runSbx(["exec", "--", "echo", String(i)], { home })),
      );
      expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0]);
      expect(results.map((r) => r.stdout).sort()).toEqual(["0\n", "1\n", "2\n", "3\n", "4\n", "5\n"]);
      expect(daemonPids(home)).toHaveLength(1);
    } finally {
      await stopDaemon(home);
      removeHome(home);
    }
  });

  it("daemon stop ends it and status then says so with exit 75; --quiet starts it again silently", async () => {
    const home = makeHome();
    try {
      expect((await runSbx(["daemon", "start"], { home })).code).toBe(0);
      expect(daemonPids(home)).toHaveLength(1);
      expect((await runMain(["daemon", "stop"], { home })).code).toBe(0);
      expect(daemonPids(home)).toHaveLength(0);
      expect(fs.existsSync(path.join(home, "daemon", "daemon.sock"))).toBe(false);
      const status = await runMain(["daemon", "status"], { home });
      expect(status.code).toBe(75);
      expect(status.stdout).toMatch(/^not running/);
      // Started on demand again, and --quiet leaves only the command's output: no start-up line.
      const quiet = await runSbx(["--quiet", "exec", "--", "echo", "hi"], { home });
      expect(quiet).toMatchObject({ code: 0, stdout: "hi\n", stderr: "" });
      expect(daemonPids(home)).toHaveLength(1);
    } finally {
      await stopDaemon(home);
      removeHome(home);
    }
  });

  it("daemon stop says what it ended; only restart-always processes start again with the daemon", async () => {
    const home = makeHome();
    const sbx = async (args: string[], input?: string) => {
      const r = await runMain(args, { home, ...(input === undefined ? {} : { input }) });
      expect(r.code, `sbx ${args.join(" ")}: ${r.stderr}`).toBe(0);
      return r;
    };
    try {
      expect((await runSbx(["daemon", "start"], { home })).code).toBe(0);
      const keeper = (
        await sbx(["process", "start", "--name", "keeper", "--restart", "always", "--", "sleep", "300"])
      ).stdout.trim();
      const worker = (
        await sbx(["process", "start", "--name", "worker", "--restart", "on-failure", "--", "sleep", "300"])
      ).stdout.trim();
      await sbx(["exec", "--detach", "--", "sleep", "300"]);
      const job = { request_id: "stop-r", jobs: [{ job_id: "stop-job", name: "j", command: "sleep 300" }] };
      await sbx(["jobs", "submit", "-"], JSON.stringify(job));
      await until(async () =>
        (await runMain(["jobs", "show", "stop-job"], { home })).stdout.includes("status\trunning"),
      );

      const stopped = await sbx(["daemon", "stop"]);
      expect(stopped.stderr).toMatch(/^sbx: daemon \(pid \d+\) stopped; it ended 2 supervised processes \(/);
      expect(stopped.stderr).toContain(`keeper (${keeper}), restart always: starts again when the daemon starts`);
      expect(stopped.stderr).toContain(
        `worker (${worker}), restart on-failure: stays ended; \`sbx process start\` it again`,
      );
      expect(stopped.stderr).toContain("1 running execution (cancelled: backend_shutdown)");
      expect(stopped.stderr).toContain("1 running job (interrupted;");

      expect((await runSbx(["daemon", "start"], { home })).code).toBe(0);
      const listed = JSON.parse((await sbx(["process", "list", "--json"])).stdout) as {
        processes: Array<{ process_id: string; state: string; end_reason: string | null }>;
      };
      const state = (id: string) => listed.processes.find((p) => p.process_id === id);
      expect(state(keeper)?.state).toBe("running");
      expect(state(worker)).toMatchObject({ state: "exited", end_reason: "backend_shutdown" });
      // Nothing left running: stopping now says so. By name: the id keeper's receipt kept
      // names the earlier boot, a stale handle now (test/e2e/boot-fences.test.ts).
      await sbx(["process", "stop", "keeper"]);
      expect((await sbx(["daemon", "stop"])).stderr).toMatch(/stopped; nothing was running\n$/);
    } finally {
      await stopDaemon(home);
      removeHome(home);
    }
  });
});
