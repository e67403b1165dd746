// --network (user) under a daemon that is not root (docs/drivers.md, "Network modes"):
// the tests run as root, so this file drops a real `sbx daemon run` to a uid of its
// own (no passwd entry, no groups, no capabilities) and asks it over its socket. Its
// sandbox reaches a server on the host's non-loopback address through slirp4netns,
// never a listener on the host's loopback, still cannot make a user namespace, and
// nothing of it is left once it is stopped or the daemon is killed with -9.

import type { ChildProcess } from "node:child_process";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bwrapArguments } from "../../src/backend/drivers/bwrap/args.js";
import { readHostView } from "../../src/backend/drivers/bwrap/host-view.js";
import { unshareOptions } from "../../src/backend/drivers/bwrap/user-net.js";
import { resolvePaths } from "../../src/config/paths.js";
import { socketClient } from "../backend/support.js";
import { REPO_ROOT, sbxEnv, TEST_BINARY } from "../support/cli.js";
import { startForegroundDaemon, stopForegroundDaemon } from "../support/daemon.js";
import { connectFrom, type CountingListener, countingListener } from "../support/listeners.js";
import { ADDRESS, describeNeeding, UNPRIVILEGED_UID } from "../support/requirements.js";
import { atEndOfFile, tempDir } from "../support/temp.js";
import { until } from "../support/wait.js";

const UID = UNPRIVILEGED_UID;

/** Live processes (not zombies) whose real uid is `uid`: this file's own uid, so no other suite's. */
function processesOf(uid: number): string[] {
  const found: string[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = fs.readFileSync(`/proc/${name}/status`, "utf8");
      const real = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      const state = /^State:\s+(\S)/m.exec(status)?.[1];
      if (real === uid && state !== "Z") found.push(`${name} ${/^Name:\s+(.*)$/m.exec(status)?.[1]}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * The run's temporary directory (and wherever the checkout is) may be private to root:
 * the dropped uid may pass through each directory above `dir` (o+x, never list it)
 * while this file runs, to reach its own directories and sbx itself.
 */
function letThrough(dir: string): void {
  for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
    const mode = fs.statSync(d).mode & 0o7777;
    if ((mode & 0o001) !== 0) continue;
    fs.chmodSync(d, mode | 0o001);
    atEndOfFile(() => fs.chmodSync(d, mode));
  }
}

describeNeeding(
  ["bwrap", "tools", "address", "usernetAsUser"],
  "--network (user) under a daemon that is not root",
  () => {
    let daemon: ChildProcess;
    let home: string;
    let ownTmp: string;
    let api: ReturnType<typeof socketClient>["api"];
    let close: () => Promise<void>;
    let outside: CountingListener;
    let loopback: CountingListener;

    const exec = async (command: string | string[]) => {
      const res = await api("POST", "/api/v1/sandbox/out/execute", { body: { command, timeout: 30_000 } });
      expect(res.status, res.text).toBe(200);
      return res.json as { stdout: string; stderr: string; exit_code: number };
    };

    beforeAll(async () => {
      const dir = tempDir("sbx-usernet-");
      letThrough(dir);
      // The daemon's program: this checkout (bin/sbx, dist/, node_modules) or the release binary.
      letThrough(REPO_ROOT);
      if (TEST_BINARY !== undefined) letThrough(path.dirname(TEST_BINARY));
      fs.chmodSync(dir, 0o711);
      home = path.join(dir, "home");
      ownTmp = path.join(dir, "tmp");
      for (const d of [home, ownTmp]) {
        fs.mkdirSync(d, { mode: 0o700 });
        fs.chownSync(d, UID, UID);
      }
      const env = sbxEnv(home, { TMPDIR: ownTmp, SBX_WIRE_RECORD: undefined });
      daemon = await startForegroundDaemon(home, [], { uid: UID, env });
      ({ api, close } = socketClient(resolvePaths({ SBX_HOME: home }).socketPath));
      outside = await countingListener(ADDRESS!);
      loopback = await countingListener("127.0.0.1");
    });
    afterAll(async () => {
      await close?.();
      if (daemon) await stopForegroundDaemon(daemon);
      await outside?.close();
      await loopback?.close();
    });

    it("says --network (user) is available, and the daemon is not root", async () => {
      const health = (await api("GET", "/api/v1/health")).json;
      expect(health.isolation.user_network).toMatchObject({ available: true, reason: null });
      expect(health.isolation.bwrap.available).toBe(true);
      expect(fs.statSync(`/proc/${daemon.pid}`).uid).toBe(UID);
    });

    it("reaches a server on the host's address, never a listener on the host's loopback", async () => {
      const created = await api("POST", "/api/v1/sandbox/create", {
        body: { name: "out", isolation: "bwrap", network_mode: "user" },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.json).toMatchObject({ network: true, network_mode: "user" });

      const routes = (await exec(["cat", "/proc/net/route"])).stdout;
      expect(routes).toMatch(/^tap0\s+00000000\s+0202000A/m);
      expect((await exec(connectFrom(ADDRESS!, outside.port))).stdout).toBe("connected\n");
      await until(() => outside.accepted() === 1, 5000, "the host's server to see the connection");

      // Through the gateway (where slirp would otherwise map the host's loopback), and its own loopback.
      for (const host of ["10.0.2.2", "127.0.0.1"]) {
        const tried = await exec(connectFrom(host, loopback.port));
        expect(tried.stdout, host).toMatch(/^(ConnectionRefusedError|OSError|TimeoutError)\n$/);
      }
      expect(loopback.accepted()).toBe(0);
    });

    it("cannot make a user namespace, and has no capability, as the daemon's uid nested below the outer namespace", async () => {
      const res = await exec(
        "cat /proc/self/uid_map; grep -E '^(CapBnd|CapEff|NoNewPrivs)' /proc/self/status; id -u; unshare -U true && echo made-one",
      );
      expect(res.stdout).not.toContain("made-one");
      const [map, ...rest] = res.stdout.trim().split("\n");
      // The command's uid maps to the outer namespace's 0 (bwrap's own, itself the daemon's uid).
      expect(map!.trim().split(/\s+/)).toEqual([String(UID), "0", "1"]);
      expect(rest).toEqual(["CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1", String(UID)]);
    });

    it("leaves nothing running once stopped, and starts again with its network", async () => {
      const stopped = await api("POST", "/api/v1/sandbox/out/stop");
      expect(stopped.status, stopped.text).toBe(200);
      const daemonOnly = [`${daemon.pid} ${fs.readFileSync(`/proc/${daemon.pid}/comm`, "utf8").trim()}`];
      await until(() => processesOf(UID).join() === daemonOnly.join(), 10_000, "only the daemon to be left");
      expect((await exec(connectFrom(ADDRESS!, outside.port))).stdout).toBe("connected\n");
      expect(processesOf(UID).some((p) => p.endsWith(" slirp4netns"))).toBe(true);
    });

    it("leaves nothing running once the daemon is killed with -9", async () => {
      expect((await api("GET", "/api/v1/sandbox/out")).json.environment.state).toBe("running");
      daemon.kill("SIGKILL");
      await until(() => processesOf(UID).length === 0, 15_000, "every process of the daemon's uid to end");
    });
  },
);

describeNeeding(["bwrap", "usernetAsUser"], "the options alone, under a daemon that is not root", () => {
  it("forbid new user namespaces (--disable-userns) in the namespace made for bwrap, without the syscall filter", () => {
    const ws = tempDir("sbx-usernet-opts-");
    letThrough(ws);
    fs.chownSync(ws, UID, UID);
    const args = bwrapArguments({
      view: readHostView(),
      insideId: null,
      network: "user",
      givenNamespace: { uid: UID, gid: UID },
      resolvConf: null,
      fds: { seccomp: null, status: null, setup: null },
      workspace: { path: ws },
      runDir: null,
      cwd: "/workspace",
      env: { PATH: "/usr/bin:/bin" },
    });
    const id = String(UID);
    const res = spawnSync(
      "setpriv",
      [
        "--reuid",
        id,
        "--regid",
        id,
        "--clear-groups",
        "--",
        "unshare",
        ...unshareOptions(),
        "bwrap",
        ...args,
        "--",
        "sh",
        "-c",
        "grep CapBnd /proc/self/status; unshare -U true && echo made-one",
      ],
      { encoding: "utf8", env: { PATH: "/usr/bin:/bin" }, cwd: "/" },
    );
    expect(res.stderr).toMatch(/No space left on device/);
    expect(res.stdout).toBe("CapBnd:\t0000000000000000\n");
  });
});
