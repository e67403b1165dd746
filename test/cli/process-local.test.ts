// Supervised processes through sbx against the embedded backend, in-process through
// main(): receipts, stdin byte for byte, large logs read back exactly, restarts,
// timeouts and signals, rotation, and UTF-8 never split by --text.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProcessResult } from "../../src/protocol/types.js";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { lines } from "../support/cli.js";
import { type LocalHome, localHome, startMain } from "../support/in-process.js";
import { until } from "../support/wait.js";

describe("sbx process against the local backend", () => {
  let local: LocalHome;
  const sbx = (args: string[], input?: string | Buffer) => local.sbx(args, input === undefined ? {} : { input });
  const start = async (args: string[]) => {
    const r = await sbx(["process", "start", ...args]);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  };
  const result = async (id: string, wait = "30s") =>
    (await local.json<ProcessResult>(["process", "result", id, "--wait", wait, "--json"])).doc;

  beforeAll(async () => {
    local = await localHome("sbx-proc-");
  });
  afterAll(() => local.close());

  it("starts a worker with a receipt and prints its id", async () => {
    const { result: r, doc } = await local.json<ReceiptDocument>([
      "process",
      "start",
      "--json",
      "--name",
      "hello",
      "--",
      "echo",
      "hi",
    ]);
    expect(r.code).toBe(0);
    expect(doc).toMatchObject({ kind: "process_start", classification: "succeeded", may_have_run: true });
    expect(doc.process_id).toMatch(/^prc_/);
    expect(doc.execution_id).toBeNull();
    expect(doc.request.path).toBe("/api/v1/sandbox/default/processes");
    const listed = await local.json<{ processes: Array<{ process_id: string; name: string }> }>(["ps", "--json"]);
    expect(listed.doc.processes.map((p) => p.process_id)).toContain(doc.process_id);
    expect((await sbx(["process", "logs", "hello", "-f"])).stdout).toBe("hi\n");
  });

  it("round-trips all 256 byte values through --stdin and cat", async () => {
    const id = await start(["--stdin", "--", "cat"]);
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    expect((await sbx(["process", "stdin", id, "--eof"], bytes)).code).toBe(0);
    // Wait for the end (eof), then read the bytes as JSON (base64), which keeps them exact.
    expect((await sbx(["process", "logs", id, "-f", "--raw"])).code).toBe(0);
    const json = lines((await sbx(["process", "logs", id, "--json", "--stream", "stdout"])).stdout).map((l) =>
      JSON.parse(l),
    );
    const data = Buffer.concat(json.map((c) => Buffer.from(c.data, "base64")));
    expect(data.equals(bytes)).toBe(true);
  });

  it("reads 15 MB of seq output back with an identical sha256, and two reads joined by next_offset lose nothing", async () => {
    const id = await start(["--", "seq", "1", "2100000"]);
    expect((await result(id)).outcome).toBe("succeeded");
    const expected = createHash("sha256")
      .update(`${Array.from({ length: 2_100_000 }, (_, i) => i + 1).join("\n")}\n`)
      .digest("hex");
    const first = lines(
      (await sbx(["process", "logs", id, "--json", "--stream", "stdout", "--limit", "1000003"])).stdout,
    ).map((l) => JSON.parse(l));
    const next = first.at(-1).next_offset;
    expect(next).toBe(1_000_003);
    const rest = lines(
      (await sbx(["process", "logs", id, "--json", "--stream", "stdout", "--offset", String(next)])).stdout,
    ).map((l) => JSON.parse(l));
    const all = Buffer.concat([...first, ...rest].map((c) => Buffer.from(c.data, "base64")));
    expect(all.length).toBeGreaterThan(15_000_000);
    expect(createHash("sha256").update(all).digest("hex")).toBe(expected);
  });

  it("on-failure with --max-restarts 2 runs exactly 3 times and keeps every run's output", async () => {
    const id = await start([
      "--restart",
      "on-failure",
      "--max-restarts",
      "2",
      "--backoff",
      "100ms",
      "--",
      "sh",
      "-c",
      "echo run; exit 1",
    ]);
    const r = await result(id);
    expect(r).toMatchObject({ outcome: "failed", exit_code: 1, restarts: 2, complete: true });
    expect((await sbx(["process", "logs", id])).stdout).toBe("run\nrun\nrun\n");
  });

  it("--timeout ends it as timed_out; TERM is reported as SIGTERM with exit code null", async () => {
    const slow = await start(["--timeout", "1s", "--", "sleep", "30"]);
    expect((await result(slow)).outcome).toBe("timed_out");
    const sleeper = await start(["--", "sleep", "30"]);
    expect((await sbx(["process", "signal", sleeper, "TERM"])).code).toBe(0);
    expect(await result(sleeper)).toMatchObject({ signal: "SIGTERM", exit_code: null, outcome: "failed" });
  });

  it("a stale PROCESS@N after a restart by policy is refused, and the new run is unaffected", async () => {
    // Run 0 fails once; run 1 (started by the policy) keeps running.
    const id = await start([
      "--restart",
      "on-failure",
      "--backoff",
      "10ms",
      "--",
      "sh",
      "-c",
      "if [ -e ran-once ]; then exec sleep 300; fi; touch ran-once; exit 1",
    ]);
    const runOne = async () => {
      const shown = await local.json<{ state: string; restarts: number; os_pid: number | null }>([
        "process",
        "show",
        id,
        "--json",
      ]);
      return shown.doc.state === "running" && shown.doc.restarts === 1 ? shown.doc.os_pid : null;
    };
    let pid: number | null = null;
    await until(
      async () => {
        pid = await runOne();
        return pid !== null;
      },
      30_000,
      "run 1 to be running",
    );
    for (const args of [
      ["process", "signal", `${id}@0`, "KILL"],
      ["process", "signal", id, "KILL", "--run", "0"],
      ["process", "stop", `${id}@0`],
    ]) {
      const refused = await sbx(args);
      expect(refused.code, args.join(" ")).not.toBe(0);
      expect(refused.stderr).toContain(`${id}@0 is not the current run of the process (it is run 1); nothing was done`);
    }
    const written = await sbx(["process", "stdin", `${id}@0`], "x");
    expect(written.code).not.toBe(0);
    expect(await runOne()).toBe(pid);
    expect(() => process.kill(pid!, 0)).not.toThrow();
    // The current run's number is accepted.
    expect((await sbx(["process", "stop", `${id}@1`, "--grace", "1s"])).code).toBe(0);
    expect((await sbx(["process", "signal", id, "TERM", "--run", "x"])).stderr).toContain("--run x: a run number");
  });

  it("stop ends the group and keeps the process; rm removes it", async () => {
    const id = await start(["--", "sleep", "30"]);
    const stopped = await sbx(["process", "stop", id, "--grace", "1s"]);
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(new RegExp(`^${id}\\texited`));
    expect((await sbx(["process", "rm", id])).code).toBe(0);
    const gone = await sbx(["process", "show", id]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/^sbx: process prc_\w+: no process/m);
  });

  it("finds a process of another sandbox by the id its start printed, without -s", async () => {
    expect((await sbx(["sandbox", "create", "elsewhere", "--isolation", "none"])).code).toBe(0);
    const started = await sbx(["process", "start", "-s", "elsewhere", "--", "echo", "there"]);
    expect(started.code, started.stderr).toBe(0);
    const id = started.stdout.trim();
    // What start says to run next is what works.
    expect(started.stderr).toContain(`sbx process logs ${id} -f`);
    const logs = await sbx(["process", "logs", id, "-f"]);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toBe("there\n");
    // -s still names the sandbox when given, and a name not found there says how to look.
    const wrong = await sbx(["process", "show", "-s", "default", id]);
    expect(wrong.code).toBe(125);
    const unnamed = await sbx(["process", "show", "nosuchname"]);
    expect(unnamed.code).toBe(125);
    expect(unnamed.stderr).toContain("sbx process list -s default");
    expect(unnamed.stderr).toContain("-s SANDBOX");
  });

  it("refuses a second process of the same name until the first has exited (409), then the name is free", async () => {
    const first = await start(["--name", "web", "--", "sleep", "300"]);
    const second = await sbx(["process", "start", "--name", "web", "--", "sleep", "300"]);
    expect(second.code, second.stderr).toBe(125);
    expect(second.stderr).toContain('the name "web" is in use by process');
    expect(second.stderr).toContain(first);
    expect(second.stderr).toContain("nothing ran");
    const json = await local.json<ReceiptDocument & { error?: { code: string } }>([
      "process",
      "start",
      "--json",
      "--name",
      "web",
      "--",
      "true",
    ]);
    expect(json.result.code).toBe(125);
    expect(JSON.stringify(json.doc)).toContain("process_name_in_use");
    const listed = await local.json<{ processes: Array<{ process_id: string; name: string | null }> }>([
      "ps",
      "--json",
    ]);
    expect(listed.doc.processes.filter((p) => p.name === "web").map((p) => p.process_id)).toEqual([first]);
    expect((await sbx(["process", "stop", "web", "--grace", "1s"])).code).toBe(0);
    const again = await start(["--name", "web", "--", "sleep", "300"]);
    // The name answers to the one that has not exited, not to the exited one.
    const shown = await local.json<{ process_id: string; state: string }>(["process", "show", "web", "--json"]);
    expect(shown.doc.process_id).toBe(again);
    expect((await sbx(["process", "rm", "web", "--grace", "0s"])).code).toBe(0);
    expect((await sbx(["process", "rm", first])).code).toBe(0);
  });

  it("ps -A and jobs list -A list every sandbox's, with a SANDBOX column and `sandbox` in --json", async () => {
    expect((await sbx(["sandbox", "create", "other", "--isolation", "none"])).code).toBe(0);
    const here = await start(["--", "sleep", "300"]);
    const there = await start(["-s", "other", "--", "sleep", "300"]);
    expect((await sbx(["jobs", "run", "-s", "other", "--name", "far", "--", "true"])).code).toBe(0);

    const one = await sbx(["ps"]);
    expect(one.stdout).toContain(here);
    expect(one.stdout).not.toContain(there);
    const all = await sbx(["ps", "-A"]);
    expect(all.code, all.stderr).toBe(0);
    const rows = lines(all.stdout);
    expect(rows[0]).toMatch(/^SANDBOX\s+PROCESS\s+NAME/);
    expect(rows.find((r) => r.includes(there))).toMatch(/^other\s+prc_/);
    expect(rows.find((r) => r.includes(here))).toMatch(/^default\s+prc_/);
    const json = await local.json<{ processes: Array<{ process_id: string; sandbox: string }> }>([
      "ps",
      "--all-sandboxes",
      "--json",
    ]);
    expect(json.doc.processes.find((p) => p.process_id === there)?.sandbox).toBe("other");
    expect(json.doc.processes.find((p) => p.process_id === here)?.sandbox).toBe("default");
    const both = await sbx(["ps", "-A", "-s", "other"]);
    expect(both.code).toBe(125);
    expect(both.stderr).toContain("cannot go together");

    expect((await sbx(["jobs", "list"])).stdout).not.toContain("far");
    const jobs = await sbx(["jobs", "list", "-A"]);
    expect(jobs.code, jobs.stderr).toBe(0);
    expect(lines(jobs.stdout)[0]).toMatch(/^SANDBOX\s+JOB/);
    expect(lines(jobs.stdout).find((r) => r.includes("far"))).toMatch(/^other\s+job_/);
    const jobsJson = await local.json<{ jobs: Array<{ name: string; sandbox: string }> }>([
      "jobs",
      "list",
      "-A",
      "--json",
    ]);
    expect(jobsJson.doc.jobs.find((j) => j.name === "far")?.sandbox).toBe("other");

    for (const id of [here, there]) expect((await sbx(["process", "rm", id, "--grace", "0s"])).code).toBe(0);
  });

  it("refuses stdin for a process started without --stdin, and unknown ids, with clear errors", async () => {
    const id = await start(["--", "sleep", "5"]);
    const refused = await sbx(["process", "stdin", id], "data");
    expect(refused.code).toBe(125);
    expect(refused.stderr).toContain("without --stdin");
    const unknown = await sbx(["process", "result", "prc_doesnotexist"]);
    expect(unknown.code).not.toBe(0);
    expect(lines(unknown.stderr)[0]).toMatch(/^sbx: .*prc_doesnotexist/);
    const bad = await sbx(["process", "signal", id, "STOP"]);
    expect(bad.code).toBe(125);
    await sbx(["process", "rm", id, "--grace", "0s"]);
  });
});

describe("process logs across rotation", () => {
  it("says on stderr when bytes were rotated away, and reads on from the oldest kept offset", async (t) => {
    const local = await localHome("sbx-rot-", { processLogSegmentBytes: 1024, processLogKeepBytes: 4096 });
    t.onTestFinished(() => local.close());
    const started = await local.sbx(["process", "start", "--", "seq", "1", "5000"]);
    const id = started.stdout.trim();
    await local.sbx(["process", "result", id, "--wait", "20s"]);
    const read = await local.sbx(["process", "logs", id, "--raw", "--stream", "stdout"]);
    expect(read.code).toBe(0);
    expect(read.stderr).toMatch(/bytes of stdout \(offsets 0\.\.(\d+)\) were rotated away/);
    const all = `${Array.from({ length: 5000 }, (_, i) => i + 1).join("\n")}\n`;
    expect(all.endsWith(read.stdout)).toBe(true);
    expect(read.stdout.length).toBeGreaterThanOrEqual(3 * 1024);
    expect(read.stdout.length).toBeLessThan(all.length);
    const chunks = lines((await local.sbx(["process", "logs", id, "--json", "--stream", "stdout"])).stdout).map((l) =>
      JSON.parse(l),
    );
    expect(chunks[0]).toMatchObject({ rotated: true });
    expect(chunks[0].offset).toBe(chunks[0].oldest_offset);
    expect(chunks.at(-1).next_offset).toBe(Buffer.byteLength(all));
  });
});

describe("process logs --text", () => {
  it("never splits a UTF-8 character between reads", async (t) => {
    const local = await localHome("sbx-utf8-");
    t.onTestFinished(() => local.close());
    const { doc } = await local.json<{ host_workspace: string }>(["sandbox", "show", "default", "--json"]);
    const release = (name: string) => fs.writeFileSync(path.join(doc.host_workspace, name), "");
    const waitFor = (name: string) => `while [ ! -e ${name} ]; do sleep 0.02; done`;
    // Each character is cut between two writes, and -f reads each part before the next is written.
    const started = await local.sbx([
      "process",
      "start",
      "--shell",
      `printf 'caf\\303'; ${waitFor("go1")}; printf '\\251 \\342\\202'; ${waitFor("go2")}; printf '\\254\\n'`,
    ]);
    const id = started.stdout.trim();
    const text = startMain(["process", "logs", id, "-f", "--text"], { home: local.home });
    await until(() => text.io.stdoutText() === "caf", 20_000, "the text before the cut é");
    release("go1");
    await until(() => text.io.stdoutText() === "café ", 20_000, "the text before the cut €");
    release("go2");
    expect((await text.done).stdout).toBe("café €\n");
  });
});

describe("the `sandbox` setting", () => {
  let local: LocalHome;
  beforeAll(async () => {
    local = await localHome("sbx-proc-setting-");
  });
  afterAll(() => local.close());

  it("is where every process verb looks without -s, as process start does", async () => {
    expect((await local.sbx(["sandbox", "create", "work"])).code).toBe(0);
    expect((await local.sbx(["config", "set", "sandbox", "work"])).code).toBe(0);
    const started = await local.sbx(["process", "start", "--name", "srv", "--", "sh", "-c", "echo up; sleep 600"]);
    expect(started.code, started.stderr).toBe(0);
    const names = async (flags: string[]) =>
      (
        JSON.parse((await local.sbx(["process", "list", "--json", ...flags])).stdout) as {
          processes: Array<{ name: string | null }>;
        }
      ).processes.map((p) => p.name);
    expect(await names([])).toEqual(["srv"]);
    expect(await names(["-s", "default"])).toEqual([]);
    // By name (no receipt to say where it is): found in the setting's sandbox, not in default.
    expect((await local.sbx(["process", "stop", "srv"])).code).toBe(0);
    expect((await local.sbx(["process", "logs", "srv", "--stream", "stdout"])).stdout).toBe("up\n");
  });
});
