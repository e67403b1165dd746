// What a bwrap sandbox can and cannot see or change (checked from the host
// afterwards), the clean environment under every driver, and the fallback to
// `none` where bwrap cannot run.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  b64,
  backendsPerTest,
  createDefaultSandbox,
  ISOLATIONS,
  processesWithArg,
  startTestBackend,
  type TestBackend,
  uniqueSleep,
  until,
} from "./support.js";
import { describeNeeding, itNeeding } from "../support/requirements.js";

const EXECUTE = "/api/v1/sandbox/default/execute";

describeNeeding("bwrap", "a bwrap sandbox", () => {
  let b: TestBackend;
  const token = `sbx-escape-${process.pid}-${Date.now()}`;
  beforeAll(async () => {
    b = await startTestBackend();
    await createDefaultSandbox(b, "bwrap");
  });
  afterAll(async () => {
    await b.stop();
  });
  const run = async (command: string | string[], sandbox = "default") =>
    (await b.api("POST", `/api/v1/sandbox/${sandbox}/execute`, { body: { command } })).json;

  it("cannot create a file outside /workspace and /tmp", async () => {
    const targets = ["/", "/etc", "/usr", "/usr/local", "/var", "/opt", "/root", "/home", b.dataDir];
    const script = targets.map((d) => `touch ${path.join(d, token)} 2>/dev/null && echo wrote ${d}`).join("; ");
    const res = await run(`${script}; touch /tmp/${token} /workspace/${token} && echo ok`);
    expect(res.stdout).toBe("ok\n");
    for (const d of targets) expect(fs.existsSync(path.join(d, token)), d).toBe(false);
    // /tmp inside is its own: the host's /tmp (and the run's TMPDIR) did not get the file; the workspace did.
    for (const d of ["/tmp", os.tmpdir()]) expect(fs.existsSync(path.join(d, token)), d).toBe(false);
    const sandbox = (await b.api("GET", "/api/v1/sandbox/default")).json;
    expect(fs.existsSync(path.join(sandbox.host_workspace, token))).toBe(true);
  });

  it("cannot read /etc/shadow, home directories or the backend's state", async () => {
    const res = await run(
      `cat /etc/shadow; ls /root; ls /home; ls ${b.dataDir}; cat ${path.join(b.dataDir, "backend.db")}; echo done`,
    );
    expect(res.stdout).toBe("done\n");
    expect(res.stdout).not.toContain("root:");
    // Failing to read it proves nothing where the command's uid could not read the host's
    // file anyway (as root, commands run as an unprivileged uid): /etc/shadow is there, as
    // /dev/null on a mount without devices, so it cannot be opened by anyone inside;
    // should the host's file be bound in its place, it shows as a regular file.
    const shadow = await run("stat -c %F /etc/shadow; cat /etc/shadow && echo read");
    expect(shadow.stdout).toBe("character special file\n");
    expect(shadow.stderr).toBe("cat: /etc/shadow: Permission denied\n");
    // Its own copy of the host's system directories is readable.
    expect((await run("head -c 4 /etc/passwd")).stdout).toBe("root");
  });

  it("has no capabilities", async () => {
    expect((await run("grep CapEff /proc/self/status")).stdout).toBe("CapEff:\t0000000000000000\n");
  });

  itNeeding("root", "does not run as the host's root: as nobody (65534) in its user namespace", async () => {
    expect((await run("id -u; id -g")).stdout).toBe("65534\n65534\n");
  });

  it("sees only lo, in a network namespace of its own; with --network host, the host's network itself", async () => {
    const interfaces = (out: string) =>
      out
        .split("\n")
        .slice(2)
        .map((l) => l.trim().split(":")[0])
        .filter((n) => n !== "");
    // The namespace, not only its interfaces: a host with nothing but lo looks the same from inside.
    const hostNamespace = fs.readlinkSync("/proc/self/ns/net");
    const offline = await run("readlink /proc/self/ns/net; cat /proc/net/dev");
    const [offlineNamespace, ...offlineDev] = offline.stdout.split("\n");
    expect(offlineNamespace).toMatch(/^net:\[\d+\]$/);
    expect(offlineNamespace).not.toBe(hostNamespace);
    expect(interfaces(offlineDev.join("\n"))).toEqual(["lo"]);

    await b.api("POST", "/api/v1/sandbox/create", {
      body: { name: "online", isolation: "bwrap", network_mode: "host" },
    });
    const online = await run("readlink /proc/self/ns/net; cat /proc/net/dev", "online");
    const [onlineNamespace, ...onlineDev] = online.stdout.split("\n");
    expect(onlineNamespace).toBe(hostNamespace);
    const host = interfaces(fs.readFileSync("/proc/net/dev", "utf8"));
    expect(interfaces(onlineDev.join("\n")).sort()).toEqual(host.sort());
  });

  it("sees its own sandbox's processes, and none of the host's or another sandbox's", async () => {
    const mine = uniqueSleep();
    const theirs = uniqueSleep();
    const other = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "other-procs" } });
    expect(other.status).toBe(201);
    const started = [
      await b.api("POST", "/api/v1/sandbox/default/processes", { body: { command: ["sleep", mine] } }),
      await b.api("POST", "/api/v1/sandbox/other-procs/processes", { body: { command: ["sleep", theirs] } }),
    ];
    expect(started.map((s) => s.status)).toEqual([201, 201]);
    await until(() => processesWithArg(mine).length + processesWithArg(theirs).length === 2, 5000, "both to run");
    const res = await run("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done");
    expect(res.stdout).toContain(mine);
    expect(res.stdout).not.toContain(theirs);
    expect(res.stdout).not.toContain("vitest");
    // bwrap's pid 1, the init, the sleep, the shell, and whatever the shell runs: nothing of the host's.
    expect(res.stdout.trim().split("\n").length).toBeLessThan(8);
    for (const [sandbox, s] of [
      ["default", started[0]!],
      ["other-procs", started[1]!],
    ] as const) {
      await b.api("DELETE", `/api/v1/sandbox/${sandbox}/processes/${s.json.process_id}?grace_ms=100`);
    }
  });

  it("keeps /workspace between executions and shares it with processes", async () => {
    expect((await run("echo kept > /workspace/kept.txt")).outcome).toBe("succeeded");
    expect((await run(["cat", "kept.txt"])).stdout).toBe("kept\n");
    const p = await b.api("POST", "/api/v1/sandbox/default/processes", {
      body: { command: "cat /workspace/kept.txt > seen-by-process.txt" },
    });
    const done = await b.api("GET", `/api/v1/sandbox/default/processes/${p.json.process_id}/result?wait_ms=10000`);
    expect(done.json.outcome).toBe("succeeded");
    expect((await run(["cat", "seen-by-process.txt"])).stdout).toBe("kept\n");
  });

  it("runs stdin, output and a shell string exactly as without isolation", async () => {
    const res = await b.api("POST", EXECUTE, { body: { command: ["cat"], stdin: b64("in\u00e9") } });
    expect(res.json).toMatchObject({ outcome: "succeeded", stdout: "in\u00e9" });
  });
});

describe("the command environment", () => {
  const marker = `SBX_DAEMON_MARKER_${process.pid}`;
  const started = backendsPerTest();
  beforeAll(() => {
    // The backend runs in this process: its environment is the daemon's.
    process.env[marker] = "leaked";
  });
  afterAll(() => {
    delete process.env[marker];
  });

  for (const isolation of ISOLATIONS) {
    itNeeding(isolation === "bwrap" ? ["bwrap"] : [], `holds nothing of the daemon's (${isolation})`, async () => {
      const b = await started();
      await createDefaultSandbox(b, isolation);
      const res = await b.api("POST", EXECUTE, { body: { command: ["env"], env: { MINE: "1" } } });
      const names = res.json.stdout
        .trim()
        .split("\n")
        .map((l: string) => l.split("=")[0])
        .sort();
      expect(names).toEqual(
        ["HOME", "LANG", "MINE", "PATH", "PWD", "SBX_EXECUTION_ID", "SBX_SANDBOX_ID", "SBX_WORKSPACE"].sort(),
      );
      const vars = Object.fromEntries(
        res.json.stdout
          .trim()
          .split("\n")
          .map((l: string) => l.split("=", 2)),
      );
      const sandbox = (await b.api("GET", "/api/v1/sandbox/default")).json;
      const workspace = isolation === "bwrap" ? "/workspace" : sandbox.host_workspace;
      expect(vars).toMatchObject({ HOME: workspace, SBX_WORKSPACE: workspace, PWD: workspace, MINE: "1" });
    });
  }
});

describe("where bwrap cannot run", () => {
  const started = backendsPerTest();
  const noBwrap = { drivers: { bwrap: { program: "/nonexistent/bwrap" } } };

  it("uses none for default and new sandboxes, says so once, and refuses bwrap with the reason", async () => {
    const b = await started(noBwrap);
    const health = (await b.api("GET", "/api/v1/health")).json;
    expect(health.isolation).toMatchObject({ default: "none", bwrap: { available: false } });
    expect(health.isolation.bwrap.reason).toContain("bubblewrap");

    const first = await b.api("POST", EXECUTE, { body: { command: ["true"] } });
    expect(first.json.outcome).toBe("succeeded");
    expect(first.headers["sbx-warning"]).toMatch(/^sandbox default runs commands without isolation \(none\)/);
    const second = await b.api("POST", EXECUTE, { body: { command: ["true"] } });
    expect(second.headers["sbx-warning"]).toBeUndefined();
    expect((await b.api("GET", "/api/v1/sandbox/default")).json).toMatchObject({ isolation: "none", network: true });

    const refused = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "iso", isolation: "bwrap" } });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: "isolation_unavailable", details: { isolation: "bwrap" } });
    expect(refused.json.error.message).toContain("install bubblewrap");
    const offline = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "off", network: false } });
    expect(offline.status).toBe(400);
    expect(offline.json.error.code).toBe("isolation_unavailable");
    const auto = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "auto" } });
    expect(auto.json).toMatchObject({ isolation: "none", network: true });
    expect(auto.headers["sbx-warning"]).toContain("install bubblewrap");
  });

  itNeeding("bwrap", "refuses to run in a bwrap sandbox made by a backend that could, with the reason", async () => {
    const first = await started();
    await createDefaultSandbox(first, "bwrap");
    await first.stop();
    const b = await started(noBwrap, first.dir);
    const res = await b.api("POST", EXECUTE, { body: { command: ["true"] } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("isolation_unavailable");
    const shown = (await b.api("GET", "/api/v1/sandbox/default")).json;
    expect(shown.driver).toMatchObject({ isolation: "bwrap", available: false });
  });
});

describe("who the daemon is, as the backend is told", () => {
  const started = backendsPerTest();

  it("finds bwrap on the PATH and names the user it was given, not what its process reads", async () => {
    const host = { uid: 4242, username: "sbx-told-user", path: "/nonexistent/sbin:/nonexistent/bin" };
    const b = await started({ drivers: { host } });
    const health = (await b.api("GET", "/api/v1/health")).json;
    expect(health.isolation.bwrap).toMatchObject({ available: false });
    expect(health.isolation.bwrap.reason).toMatch(/^bwrap is not on PATH/);
    const shown = (await b.api("GET", "/api/v1/sandbox/default")).json;
    expect(shown.driver).toMatchObject({ isolation: "none", user: "sbx-told-user" });
  });
});

describe("removing a sandbox", () => {
  const started = backendsPerTest();
  it("is refused while something runs in it, and ends it all with force", async () => {
    const b = await started({ killGraceMs: 200 });
    await b.api("POST", "/api/v1/sandbox/create", { body: { name: "busy" } });
    const [a, c] = [uniqueSleep(), uniqueSleep()];
    const pending = b.api("POST", "/api/v1/sandbox/busy/execute", { body: { command: ["sleep", a] } });
    await b.api("POST", "/api/v1/sandbox/busy/processes", { body: { command: ["sleep", c] } });
    await until(() => processesWithArg(a).length + processesWithArg(c).length === 2, 5000, "both to run");
    const refused = await b.api("DELETE", "/api/v1/sandbox/busy");
    expect([refused.status, refused.json.error.code]).toEqual([409, "sandbox_busy"]);
    const host = (await b.api("GET", "/api/v1/sandbox/busy")).json.host_workspace;
    const removed = await b.api("DELETE", "/api/v1/sandbox/busy?force=true");
    expect(removed.status, removed.text).toBe(200);
    expect((await pending).json).toMatchObject({ outcome: "cancelled" });
    expect(processesWithArg(a)).toEqual([]);
    expect(processesWithArg(c)).toEqual([]);
    expect(fs.existsSync(host)).toBe(false);
  });
});
