// What the backend writes for one execution. On `none`: the row (pending) before the
// spawn; the record's start with the `started` event in one transaction after it. On
// bwrap, whose runs are spawned held (nothing runs before bwrap reads its options): the
// row, the start and the `started` event in one transaction before the command may
// run. Then the end with `exit` and `end` in one transaction. Each is an fsync'd
// commit, so their number is most of what a warm exec costs the daemon
// (BENCHMARKS.md). Output files are synced at the end only when something was written.

import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BackendStore } from "../../src/backend/store/db.js";
import { OutputFiles } from "../../src/backend/executions/output-files.js";
import { describeNeeding } from "../support/requirements.js";
import { backendsPerTest, EXECUTE, groupAlive, tempDir, until, workspaceOf } from "./support.js";

const EXECUTIONS = "/api/v1/sandbox/default/executions";
const start = backendsPerTest("none");
const startBwrap = backendsPerTest("bwrap");

afterEach(() => {
  vi.restoreAllMocks();
});

async function eventTypes(b: Awaited<ReturnType<typeof start>>, id: string): Promise<string[]> {
  const page = (await b.api("GET", `${EXECUTIONS}/${id}/events?limit=100`)).json;
  return (page.events as Array<{ sequence: number; type: string }>).map((e) => `${e.sequence}:${e.type}`);
}

describe("the durable writes of one execution", () => {
  it("are three transactions: admitted before the spawn, started (record and event) after it, ended", async () => {
    const b = await start();
    // The sandbox exists and the statements are prepared: only the execution's own writes are counted.
    expect((await b.api("POST", EXECUTE, { body: { command: ["true"] } })).status).toBe(200);

    const transactions = vi.spyOn(BackendStore.prototype, "transaction");
    const answer = await b.api("POST", EXECUTE, { body: { command: ["true"] } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ outcome: "succeeded", exit_code: 0 });
    expect(transactions).toHaveBeenCalledTimes(3);
    transactions.mockRestore();

    const record = (await b.api("GET", `${EXECUTIONS}/${answer.json.execution_id}`)).json;
    expect(record.started_at).toEqual(expect.any(String));
    expect(await eventTypes(b, answer.json.execution_id)).toEqual(["1:started", "2:exit", "3:end"]);
  });

  it("a start that cannot be stored at once is stored later, in order, before the end", async () => {
    const b = await start();
    expect((await b.api("POST", EXECUTE, { body: { command: ["true"] } })).status).toBe(200);
    // The start's commit fails once (as on a full disk); the event log keeps the batch and retries it.
    vi.spyOn(BackendStore.prototype, "markExecutionStarted").mockImplementationOnce(() => {
      throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    });
    const answer = await b.api("POST", EXECUTE, { body: { command: ["sh", "-c", "echo hi"] } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ outcome: "succeeded", stdout: "hi\n" });
    expect(b.logs.join("\n")).toContain("could not record its start yet");
    const id = answer.json.execution_id as string;
    const record = await until(
      async () => {
        const r = (await b.api("GET", `${EXECUTIONS}/${id}`)).json;
        return r.started_at !== null && r.record_pending === false ? r : undefined;
      },
      10_000,
      "the start and the end to be stored",
    );
    expect(record).toMatchObject({ outcome: "succeeded", stdout: "hi\n" });
    const types = await eventTypes(b, id);
    expect(types[0]).toBe("1:started");
    expect(types.slice(-2).map((t) => t.split(":")[1])).toEqual(["exit", "end"]);
  });
});

describeNeeding("bwrap", "the durable writes of one execution under bwrap (spawned held)", () => {
  it("are two transactions: admitted with its start and `started` event before the command runs, ended", async () => {
    const b = await startBwrap();
    expect((await b.api("POST", EXECUTE, { body: { command: ["true"] } })).status).toBe(200);

    const transactions = vi.spyOn(BackendStore.prototype, "transaction");
    const answer = await b.api("POST", EXECUTE, { body: { command: ["sh", "-c", "echo hi; exit 3"] } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ outcome: "failed", exit_code: 3, stdout: "hi\n" });
    expect(transactions).toHaveBeenCalledTimes(2);
    transactions.mockRestore();

    const record = (await b.api("GET", `${EXECUTIONS}/${answer.json.execution_id}`)).json;
    expect(record.started_at).toEqual(expect.any(String));
    // Admitted before it started, though its row was written after the (held) spawn.
    expect(Date.parse(record.created_at)).toBeLessThanOrEqual(Date.parse(record.started_at));
    const types = await eventTypes(b, answer.json.execution_id);
    expect(types[0]).toBe("1:started");
    expect(types.slice(-2).map((t) => t.split(":")[1])).toEqual(["exit", "end"]);
  });

  it("a run whose admission cannot be stored never runs: 503 not_started, its group ended, no files left", async () => {
    const b = await startBwrap();
    const workspace = await workspaceOf(b);
    expect((await b.api("POST", EXECUTE, { body: { command: ["true"] } })).status).toBe(200);
    let pgid: number | null = null;
    const markStarted = vi
      .spyOn(BackendStore.prototype, "markExecutionStarted")
      .mockImplementationOnce((_id, _at, group) => {
        pgid = group.pgid;
        throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
      });
    const r = await b.api("POST", EXECUTE, { body: { command: "touch ran" } });
    expect(markStarted).toHaveBeenCalledTimes(1);
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ code: "not_started", details: { reason: "storage_unavailable" } });
    expect(pgid).toEqual(expect.any(Number));
    await until(() => !groupAlive(pgid!), 10_000, "the held run's group to be gone");
    expect(fs.existsSync(path.join(workspace, "ran"))).toBe(false);
    // Nothing of it was stored, and its output files went with it.
    expect((await b.api("GET", EXECUTIONS)).json.executions).toHaveLength(1);
    const executionsDir = path.join(path.dirname(workspace), "executions");
    expect(fs.readdirSync(executionsDir)).toHaveLength(1);
  });
});

describe("an execution's output files at its end", () => {
  it("syncs a file that was written to, and leaves an empty one alone (nothing to sync)", () => {
    const dir = path.join(tempDir(), "exe");
    const files = OutputFiles.create(dir);
    files.append("stdout", Buffer.from("kept\n"));
    const synced = vi.spyOn(fs, "fdatasyncSync");
    files.close({ sync: true });
    expect(synced).toHaveBeenCalledTimes(1);
    expect(fs.readFileSync(path.join(dir, "stdout"), "utf8")).toBe("kept\n");
    expect(fs.readFileSync(path.join(dir, "stderr"), "utf8")).toBe("");
  });
});
