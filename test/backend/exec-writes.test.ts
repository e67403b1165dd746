// What the backend writes for one execution, counted as the disk has it: commits in
// backend.db's write-ahead log (test/support/sqlite-wal.ts). On `none`: the row
// (pending) before the spawn; the record's start with the `started` event in one
// transaction after it. On bwrap, whose runs are spawned held (nothing runs before
// bwrap reads its options): the row, the start and the `started` event in one
// transaction before the command may run. Then the end with `exit` and `end` in one
// transaction. Each is an fsync'd commit, so their number is most of what a warm exec
// costs the daemon (BENCHMARKS.md). The commands counted print nothing: output is
// stored as the event log's flush finds it (every 25 ms), with the end when the command
// ends sooner, in a commit of its own when the backend is slow to see the end — on a
// busy machine, a command that printed cost one commit more. And what a full disk (a
// real small tmpfs) does to those writes. Output files are synced at the end only when
// something was written.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { EventLog } from "../../src/backend/executions/events.js";
import { OutputFiles } from "../../src/backend/executions/output-files.js";
import { type ExecutionEnd, ExecutionStore } from "../../src/backend/executions/store.js";
import { SandboxStore } from "../../src/backend/sandboxes/store.js";
import { BackendStore } from "../../src/backend/store/db.js";
import type { ExitEventData } from "../../src/protocol/types.js";
import { uniqueSleep } from "../support/processes.js";
import { describeNeeding } from "../support/requirements.js";
import { commitsDuring } from "../support/sqlite-wal.js";
import { fillUntilFree, smallTmpfs } from "../support/tmpfs.js";
import { backendsPerTest, EXECUTE, type TestBackend, tempDir, until, workspaceOf } from "./support.js";

const EXECUTIONS = "/api/v1/sandbox/default/executions";
const start = backendsPerTest("none");
const startBwrap = backendsPerTest("bwrap");

async function eventTypes(b: TestBackend, id: string): Promise<string[]> {
  const page = (await b.api("GET", `${EXECUTIONS}/${id}/events?limit=100`)).json;
  return (page.events as Array<{ sequence: number; type: string }>).map((e) => `${e.sequence}:${e.type}`);
}

/** The live processes whose command line holds `token` (bwrap's own included): a unique token finds only this test's. */
function carrying(token: string): number[] {
  return fs
    .readdirSync("/proc")
    .filter((name) => {
      if (!/^\d+$/.test(name)) return false;
      try {
        return fs.readFileSync(`/proc/${name}/cmdline`, "utf8").includes(token);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("the durable writes of one execution", () => {
  it("are three commits on none: admitted before the spawn, started (record and event) after it, ended", async () => {
    const b = await start();
    const db = path.join(b.dataDir, "backend.db");
    // The sandbox exists and the statements are prepared: only the execution's own writes are counted.
    expect((await b.api("POST", EXECUTE, { body: { command: ["true"] } })).status).toBe(200);

    let answer: Awaited<ReturnType<TestBackend["api"]>> | undefined;
    const commits = await commitsDuring(db, async () => {
      answer = await b.api("POST", EXECUTE, { body: { command: ["true"] } });
    });
    expect(answer!.json).toMatchObject({ outcome: "succeeded", exit_code: 0 });
    expect(commits).toBe(3);
    const record = (await b.api("GET", `${EXECUTIONS}/${answer!.json.execution_id}`)).json;
    expect(record.started_at).toEqual(expect.any(String));
    expect(await eventTypes(b, answer!.json.execution_id)).toEqual(["1:started", "2:exit", "3:end"]);
  });
});

describeNeeding("bwrap", "the durable writes of one execution under bwrap (spawned held)", () => {
  it("are two commits: admitted with its start and `started` event before the command runs, ended", async () => {
    const b = await startBwrap();
    const db = path.join(b.dataDir, "backend.db");
    expect((await b.api("POST", EXECUTE, { body: { command: ["true"] } })).status).toBe(200);

    let answer: Awaited<ReturnType<TestBackend["api"]>> | undefined;
    const commits = await commitsDuring(db, async () => {
      answer = await b.api("POST", EXECUTE, { body: { command: ["sh", "-c", "exit 3"] } });
    });
    expect(answer!.json).toMatchObject({ outcome: "failed", exit_code: 3, stdout: "" });
    expect(commits).toBe(2);
    const record = (await b.api("GET", `${EXECUTIONS}/${answer!.json.execution_id}`)).json;
    expect(record.started_at).toEqual(expect.any(String));
    // Admitted before it started, though its row was written after the (held) spawn.
    expect(Date.parse(record.created_at)).toBeLessThanOrEqual(Date.parse(record.started_at));
    expect(await eventTypes(b, answer!.json.execution_id)).toEqual(["1:started", "2:exit", "3:end"]);
  });
});

describeNeeding(["bwrap", "tmpfs"], "a full disk (a real small tmpfs) under a held bwrap run", () => {
  it("a run whose admission cannot be stored never runs: 503 not_started, nothing of it left, no files", async () => {
    const fsys = smallTmpfs("16m");
    const b = await startBwrap({}, fsys.dir);
    const workspace = await workspaceOf(b);
    expect((await b.api("POST", EXECUTE, { body: { command: ["true"] } })).status).toBe(200);
    const token = uniqueSleep();
    fillUntilFree(fsys.dir);
    const r = await b.api("POST", EXECUTE, { body: { command: `touch ran; sleep ${token}` } });
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ code: "not_started", details: { reason: "storage_unavailable" } });
    // The held bwrap (its command line carries the token) was ended, and its command never ran.
    await until(() => carrying(token).length === 0, 10_000, "the held run to be ended");
    expect(fs.existsSync(path.join(workspace, "ran"))).toBe(false);
    // Nothing of it was stored, and its output files went with it.
    expect((await b.api("GET", EXECUTIONS)).json.executions).toHaveLength(1);
    expect(fs.readdirSync(path.join(path.dirname(workspace), "executions"))).toHaveLength(1);
    await b.stop();
    fsys.cleanup();
  });
});

// The start of a run on `none` is stored just after its spawn, right after its
// admission: no request can fill the disk between the two. The event log, which keeps
// and retries that write, is driven here on a real full tmpfs instead.
describeNeeding("tmpfs", "a start the event log cannot store at once (real SQLite on a full tmpfs)", () => {
  it("is stored later, in order, before the end", async () => {
    const fsys = smallTmpfs("8m");
    const store = new BackendStore(path.join(fsys.dir, "backend.db"));
    const rows = new ExecutionStore(store);
    const logged: string[] = [];
    const log = new EventLog({
      store,
      outputDir: (sandbox, execution) => path.join(fsys.dir, sandbox, execution),
      log: (line) => logged.push(line),
    });
    const [id, at] = ["exe_fulldisk", new Date().toISOString()];
    new SandboxStore(store).insertSandbox({
      sandbox_id: "sbx_1",
      name: "default",
      status: "ready",
      isolation: "none",
      network: 1,
      uid: null,
      limits: null,
      network_mode: null,
      publish: null,
      image: null,
      labels: null,
      egress: null,
      idle_timeout_ms: null,
      last_stop: null,
      created_at: at,
    });
    store.transaction(() =>
      rows.insertExecution({
        execution_id: id,
        sandbox_id: "sbx_1",
        idempotency_key: null,
        command: ["true"],
        working_dir: "/",
        timeout_ms: 60_000,
        created_at: at,
        daemon_boot: "boot_test",
      }),
    );
    const writer = log.open(id, "sbx_1");
    const filler = fillUntilFree(fsys.dir);

    const group = { pgid: 4242, startTime: null, bootId: null };
    const started = writer.started({ execution_id: id, sandbox_id: "sbx_1", started_at: at }, () =>
      rows.markExecutionStarted(id, at, group),
    );
    expect(started).toBe(false);
    const exit: ExitEventData = {
      outcome: "succeeded",
      exit_code: 0,
      signal: null,
      system_error: null,
      record_pending: false,
      finished_at: at,
    };
    const end: ExecutionEnd = {
      ...exit,
      end_reason: null,
      usage: null,
      stdout: "",
      stderr: "",
      stdout_bytes: 0,
      stderr_bytes: 0,
      stdout_truncated: false,
      stderr_truncated: false,
      duration_ms: 1,
    };
    const stored = writer.finish({ exit, end: { state: "complete" } }, () => rows.finishExecution(id, end));
    expect(stored).toBe(false);
    // Nothing of it is stored yet: what a reader would be served.
    expect(rows.getExecution(id)).toMatchObject({ started_at: null, outcome: "pending" });
    expect(rows.readEvents(id, 0, 100)).toEqual([]);
    expect(logged.join("\n")).toContain("could not store events");

    fs.rmSync(filler);
    await until(() => rows.getExecution(id)?.outcome === "succeeded", 20_000, "the start and the end to be stored");
    expect(rows.getExecution(id)).toMatchObject({ started_at: at, pgid: 4242, outcome: "succeeded", exit_code: 0 });
    expect(rows.readEvents(id, 0, 100).map((e) => `${e.sequence}:${e.type}`)).toEqual(["1:started", "2:exit", "3:end"]);
    expect(logged).toContain("event log: stored what was waiting");
    log.close();
    store.close();
    fsys.cleanup();
  });
});

describe("an execution's output files at its end", () => {
  it("syncs a file that was written to, and leaves an empty one alone (nothing to sync)", () => {
    const dir = path.join(tempDir(), "exe");
    const files = OutputFiles.create(dir);
    files.append("stdout", Buffer.from("kept\n"));
    // fdatasync(2) calls, as the kernel would count them: watched, not replaced.
    const synced = vi.spyOn(fs, "fdatasyncSync");
    try {
      files.close({ sync: true });
      expect(synced).toHaveBeenCalledTimes(1);
    } finally {
      synced.mockRestore();
    }
    expect(fs.readFileSync(path.join(dir, "stdout"), "utf8")).toBe("kept\n");
    expect(fs.readFileSync(path.join(dir, "stderr"), "utf8")).toBe("");
  });
});
