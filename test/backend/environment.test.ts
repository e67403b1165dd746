// One sandbox, one environment (docs/drivers.md): the executions, supervised
// processes and jobs of a bwrap sandbox share one process table, one loopback, one
// /tmp and one hostname — the transcripts of a new user, turned around — and
// `sandbox stop` ends all of it while the next command starts it again. Two sandboxes
// share none of it.

import { afterAll, beforeAll, expect, it } from "vitest";
import { describeNeeding } from "../support/requirements.js";
import { processesWithArg, startTestBackend, type TestBackend, uniqueSleep, until } from "./support.js";

/** A client of the sandbox's own loopback: exit 0 when the server answers, else the error on stderr. */
const CLIENT = [
  "python3",
  "-c",
  "import sys, urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/', timeout=5); print('answered')",
];
const SERVER = ["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"];

describeNeeding(["bwrap", "tools"], "one sandbox, one environment", () => {
  let b: TestBackend;
  beforeAll(async () => {
    b = await startTestBackend();
    for (const name of ["web", "other"]) {
      const res = await b.api("POST", "/api/v1/sandbox/create", { body: { name, isolation: "bwrap" } });
      expect(res.status, res.text).toBe(201);
    }
  });
  afterAll(async () => {
    await b.stop();
  });

  const exec = async (command: string | string[], sandbox = "web") =>
    (await b.api("POST", `/api/v1/sandbox/${sandbox}/execute`, { body: { command, timeout: 30_000 } })).json;
  const startProcess = async (command: string | string[], sandbox = "web") => {
    const res = await b.api("POST", `/api/v1/sandbox/${sandbox}/processes`, { body: { command } });
    expect(res.status, res.text).toBe(201);
    return res.json as { process_id: string; os_pid: number };
  };
  const stopProcess = (id: string, sandbox = "web") =>
    b.api("DELETE", `/api/v1/sandbox/${sandbox}/processes/${id}?grace_ms=100`);

  it("serves a client over 127.0.0.1 from a server started as a process, without --network", async () => {
    const server = await startProcess(SERVER);
    // The server takes a moment to listen: the client is run until it is answered.
    const answered = await until(async () => {
      const res = await exec(CLIENT);
      return res.exit_code === 0 ? res : undefined;
    }, 20_000);
    expect(answered.stdout).toBe("answered\n");
    // The other sandbox has a loopback of its own: nothing listens there.
    const elsewhere = await exec(CLIENT, "other");
    expect(elsewhere.exit_code).toBe(1);
    expect(elsewhere.stderr).toMatch(/Connection refused/);
    await stopProcess(server.process_id);
  });

  it("shares /tmp between a process and the executions after it, and not with another sandbox", async () => {
    const p = await startProcess(["sh", "-c", "echo hi > /tmp/shared; exec sleep 30"]);
    await until(async () => (await exec(["cat", "/tmp/shared"])).stdout === "hi\n", 30_000, "the file in /tmp");
    expect((await exec(["ls", "/tmp"], "other")).stdout).not.toContain("shared");
    await stopProcess(p.process_id);
  });

  it("shows the sandbox's processes to ps, and no one else's", async () => {
    const mine = uniqueSleep();
    const theirs = uniqueSleep();
    const procs = [await startProcess(["sleep", mine]), await startProcess(["sleep", theirs], "other")];
    await until(() => processesWithArg(mine).length + processesWithArg(theirs).length === 2, 30_000, "both sleeps");
    const ps = await exec(["ps", "ax", "-o", "pid,args"]);
    expect(ps.exit_code, ps.stderr).toBe(0);
    expect(ps.stdout).toContain(`sleep ${mine}`);
    expect(ps.stdout).toContain("__sandbox-init");
    expect(ps.stdout).not.toContain(theirs);
    await stopProcess(procs[0]!.process_id);
    await stopProcess(procs[1]!.process_id, "other");
  });

  it("says a program only the sandbox can find missing (under its /tmp) on stderr, 127, every time", async () => {
    // The init finds it missing before it opens the command's streams: none ends before it is said.
    for (let round = 0; round < 8; round++) {
      const r = await exec([`/tmp/not-here-${round}`]);
      expect({ round, code: r.exit_code, stderr: r.stderr }).toEqual({
        round,
        code: 127,
        stderr: `sbx: /tmp/not-here-${round}: command not found\n`,
      });
    }
  });

  it("has one hostname, the same for executions and processes", async () => {
    const p = await startProcess(["sh", "-c", "hostname > /tmp/host-of-process; exec sleep 30"]);
    await until(async () => (await exec(["cat", "/tmp/host-of-process"])).stdout === "sbx\n", 30_000, "the name");
    expect((await exec(["hostname"])).stdout).toBe("sbx\n");
    await stopProcess(p.process_id);
  });

  it("stops everything in it at sandbox stop, and starts again at the next command", async () => {
    const supervised = uniqueSleep();
    const escaped = uniqueSleep();
    const p = await startProcess(["sleep", supervised]);
    // Something started in the background that left its run (a daemon): it is still in the sandbox.
    // The command ends only once the child is in a session of its own: until its setsid()
    // it is in the run's session, and what a run leaves in its session ends with the run.
    const ownSession = `[ "$(cut -d' ' -f6 /proc/$!/stat)" != "$(cut -d' ' -f6 /proc/$$/stat)" ]`;
    await exec([
      "sh",
      "-c",
      `setsid sleep ${escaped} > /dev/null 2>&1 < /dev/null & until ${ownSession}; do sleep 0.01; done; echo kept > /tmp/mark`,
    ]);
    await until(() => processesWithArg(escaped).length === 1, 30_000, "the daemon");
    expect(processesWithArg(supervised)).toHaveLength(1);

    const stopped = await b.api("POST", "/api/v1/sandbox/web/stop");
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.json).toMatchObject({
      name: "web",
      was_running: true,
      ended: { executions: 0, processes: 1, jobs: 0 },
      environment: { state: "stopped", processes: 0 },
    });
    expect(stopped.json.ended.other).toContain("sleep");
    await until(() => processesWithArg(supervised).length + processesWithArg(escaped).length === 0, 30_000, "all gone");
    const record = (await b.api("GET", `/api/v1/sandbox/web/processes/${p.process_id}`)).json;
    expect(record).toMatchObject({ state: "exited", outcome: "cancelled", end_reason: "stopped" });
    expect((await b.api("GET", "/api/v1/sandbox/web")).json.environment).toMatchObject({ state: "stopped" });

    // The next command starts a new environment: the workspace is kept, /tmp is new.
    const again = await exec(["sh", "-c", "cat /tmp/mark 2>/dev/null || echo fresh"]);
    expect(again).toMatchObject({ outcome: "succeeded", stdout: "fresh\n" });
    const shown = (await b.api("GET", "/api/v1/sandbox/web")).json;
    expect(shown.environment).toMatchObject({ state: "running", init_pid: expect.any(Number) });

    // A stopped sandbox stopped again: nothing to stop.
    await b.api("POST", "/api/v1/sandbox/other/stop");
    const twice = await b.api("POST", "/api/v1/sandbox/other/stop");
    expect(twice.json).toMatchObject({
      was_running: false,
      ended: { executions: 0, processes: 0, jobs: 0, other: [] },
    });
    // And started explicitly.
    const started = await b.api("POST", "/api/v1/sandbox/other/start");
    expect(started.status, started.text).toBe(200);
    expect(started.json.environment).toMatchObject({ state: "running", processes: 2 });
  });

  it("keeps a command from forging the init's events: its stdout cannot be opened, and an exit is checked", async () => {
    // A command of the sandbox runs as the init's uid: it tries to write `exit` lines for
    // every run id it can guess into the init's stdout, while a supervised process runs.
    const victim = await startProcess(["sleep", uniqueSleep()]);
    try {
      const forged = Array.from(
        { length: 64 },
        (_, i) => `{"ev":"exit","id":"r${i.toString(36)}","code":0,"signal":null}`,
      );
      const attack = await exec(["sh", "-c", `printf '%s\\n' ${forged.map((l) => `'${l}'`).join(" ")} > /proc/2/fd/1`]);
      // The init's stdio are socket pairs: /proc/PID/fd/N of a socket cannot be opened.
      expect(attack.exit_code).not.toBe(0);
      expect(attack.stderr).toContain("No such device or address");
      const shown = (await b.api("GET", `/api/v1/sandbox/web/processes/${victim.process_id}`)).json;
      expect(shown).toMatchObject({ state: "running", outcome: "pending" });
    } finally {
      await stopProcess(victim.process_id);
    }
  });

  it("costs only its pid 1 and its init once its commands are done", async () => {
    await exec(["true"]);
    await until(
      async () => (await b.api("GET", "/api/v1/sandbox/web")).json.environment.processes === 2,
      30_000,
      "only bwrap's pid 1 and the init left",
    );
  });
});
