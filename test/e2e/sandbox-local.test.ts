// The embedded backend as a real process: started on demand with a scrubbed
// environment, and when it is killed with SIGKILL nothing of its sandboxes keeps
// running (bwrap's --die-with-parent and the pid namespace).

import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { collect, makeHome, removeHome, runSbx, spawnSbx } from "../support/cli.js";
import { startForegroundDaemon, stopDaemon, stopForegroundDaemon } from "../support/daemon.js";
import { runMain } from "../support/in-process.js";
import { processesWithArg, uniqueSleep } from "../support/processes.js";
import { until } from "../support/wait.js";
import { itNeeding } from "../support/requirements.js";

function daemonPid(home: string): number {
  return Number(fs.readFileSync(path.join(home, "daemon", "daemon.pid"), "utf8").trim());
}

describe("the local daemon", () => {
  it("is started without the caller's API key, tokens or other variables", async (t) => {
    const home = makeHome("sbx-e2e-env-");
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    const secrets = { SBX_API_KEY: "sk-never-in-the-daemon", SBX_DAEMON_TOKEN: "tok-never", MY_MARKER: "marker-1" };
    const first = await runSbx(["exec", "--", "true"], { home, env: secrets });
    expect(first.code, first.stderr).toBe(0);
    const environ = fs.readFileSync(`/proc/${daemonPid(home)}/environ`, "utf8");
    for (const value of Object.values(secrets)) expect(environ).not.toContain(value);
    expect(environ).toContain(`SBX_HOME=${home}`);

    // What the issue tried: reading the parent's environment from inside a command.
    const probe = await runSbx(["exec", "--shell", 'tr "\\0" "\\n" </proc/$PPID/environ; env'], {
      home,
      env: secrets,
    });
    for (const value of Object.values(secrets)) expect(probe.stdout).not.toContain(value);
  });

  itNeeding("bwrap", "runs bwrap sandboxes with SBX_HOME reached through a symlink", async (t) => {
    const real = makeHome("sbx-e2e-real-");
    const links = makeHome("sbx-e2e-links-");
    const home = path.join(links, "home");
    fs.symlinkSync(real, home);
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(links);
      removeHome(real);
    });
    const ran = await runSbx(["exec", "--json", "--", "sh", "-c", "pwd; echo made > here.txt"], { home });
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ classification: "succeeded", stdout: "/workspace\n" });
    const shown = await runSbx(["sandbox", "show", "default", "--json"], { home });
    const sandbox = JSON.parse(shown.stdout);
    expect(sandbox.isolation).toBe("bwrap");
    // Everything lives under the real directory, named by its real path.
    expect(sandbox.host_workspace.startsWith(`${fs.realpathSync(real)}/`)).toBe(true);
    expect(fs.readFileSync(path.join(sandbox.host_workspace, "here.txt"), "utf8")).toBe("made\n");
  });

  itNeeding("bwrap", "passes no descriptor it inherited to a sandbox (a parent's leaked pipe stays out)", async (t) => {
    const home = makeHome("sbx-e2e-leak-");
    const daemon = await startForegroundDaemon(home, [], { leakFd: 40 });
    t.onTestFinished(async () => {
      await stopForegroundDaemon(daemon);
      removeHome(home);
    });
    const res = await runMain(["exec", "--", "sh", "-c", "test -e /proc/self/fd/40 && echo leaked || echo clean"], {
      home,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe("clean\n");
  });

  itNeeding("bwrap", "killed with SIGKILL leaves no process of a sandbox running", async (t) => {
    const home = makeHome("sbx-e2e-kill-");
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    const [supervised, executing] = [uniqueSleep(), uniqueSleep()];
    const started = await runSbx(["process", "start", "--restart", "always", "--", "sleep", supervised], { home });
    expect(started.code, started.stderr).toBe(0);
    const exec = spawnSbx(["exec", "--", "sleep", executing], { home });
    const execDone = collect(exec, undefined, "sbx exec (its daemon killed)");
    await until(() => processesWithArg(supervised).length + processesWithArg(executing).length === 2, 10_000, "both");
    const sandbox = await runMain(["sandbox", "show", "default", "--json"], { home });
    expect(JSON.parse(sandbox.stdout).isolation).toBe("bwrap");

    process.kill(daemonPid(home), "SIGKILL");
    await until(
      () => processesWithArg(supervised).length + processesWithArg(executing).length === 0,
      10_000,
      "the sandboxes' processes to end with the daemon",
    );
    exec.kill("SIGKILL");
    await execDone;
    // The next command starts a daemon again: its recovery starts the `always` process as a new run.
    const list = await runSbx(["process", "list", "--json"], { home });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).processes).toEqual([expect.objectContaining({ restarts: 1, state: "running" })]);
  });
});

describe("sbx cp of 1 GiB", () => {
  // The peak resident memory of each sbx cp process, as GNU time reads it from the kernel when it ends.
  const peakOf = (file: string) => Number(fs.readFileSync(file, "utf8").trim().split("\n").pop()) * 1024;

  itNeeding(
    "time",
    "moves the file both ways byte for byte, with the memory of sbx and of its daemon bounded",
    async (t) => {
      const home = makeHome("sbx-e2e-cp-");
      t.onTestFinished(async () => {
        await stopDaemon(home);
        removeHome(home);
      });
      const started = await runSbx(["daemon", "start"], { home });
      expect(started.code, started.stderr).toBe(0);
      const big = path.join(home, "big.bin");
      // 1 GiB that is not all zeros: a 1 MiB random block repeated.
      const block = randomBytes(1024 * 1024);
      const fd = fs.openSync(big, "w");
      const hash = createHash("sha256");
      for (let i = 0; i < 1024; i++) {
        fs.writeSync(fd, block);
        hash.update(block);
      }
      fs.closeSync(fd);
      const want = hash.digest("hex");

      const [upPeak, downPeak] = [path.join(home, "up.peak"), path.join(home, "down.peak")];
      const up = await runSbx(["cp", big, "default:/workspace/big.bin", "--json"], {
        home,
        timeoutMs: 120_000,
        via: ["/usr/bin/time", "-f", "%M", "-o", upPeak],
      });
      expect(up.code, up.stderr).toBe(0);
      expect(JSON.parse(up.stdout)).toMatchObject({ bytes: 1024 ** 3, sha256: want });
      fs.rmSync(big);
      const back = path.join(home, "back.bin");
      const down = await runSbx(["cp", "default:/workspace/big.bin", back, "--json"], {
        home,
        timeoutMs: 120_000,
        via: ["/usr/bin/time", "-f", "%M", "-o", downPeak],
      });
      expect(down.code, down.stderr).toBe(0);
      expect(JSON.parse(down.stdout)).toMatchObject({ bytes: 1024 ** 3, sha256: want });
      expect(fs.statSync(back).size).toBe(1024 ** 3);

      // The daemon's peak resident memory over its whole life, both copies included.
      const status = fs.readFileSync(`/proc/${daemonPid(home)}/status`, "utf8");
      const peakKiB = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
      expect(peakKiB).toBeGreaterThan(0);
      expect(peakKiB * 1024).toBeLessThan(256 * 1024 * 1024);
      // And the CLI's, each way: it streams the file, never holds it.
      for (const file of [upPeak, downPeak]) {
        expect(peakOf(file)).toBeGreaterThan(0);
        expect(peakOf(file), file).toBeLessThan(256 * 1024 * 1024);
      }
    },
    180_000,
  );
});
