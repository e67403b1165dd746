// The backend on a full disk (a small tmpfs, as root): an execution whose end cannot
// be written is never left `pending` until a restart; it is answered from memory as
// record_pending (it ran; do not resubmit), in a list as by id, and stored once there
// is room; a client attached to its terminal is told its exit then. One that cannot
// even be admitted: admission-full-disk.test.ts.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { fillUntilFree, smallTmpfs } from "../support/tmpfs.js";
import { backendsPerTest, EXECUTE, until, workspaceOf } from "./support.js";
import { describeNeeding } from "../support/requirements.js";
import { openWebSocket } from "../support/websocket.js";

const EXECUTIONS = "/api/v1/sandbox/default/executions";
const start = backendsPerTest();

describeNeeding("tmpfs", "a full disk under the backend (a small tmpfs, as root)", () => {
  it("an execution that ends while its log cannot be written is answered, never left pending, and stored later", async (t) => {
    const fsys = smallTmpfs("24m");
    const b = await start({ eventFlushMs: 5 }, fsys.dir);
    t.onTestFinished(async () => {
      await b.stop();
      fsys.cleanup();
    });
    const workspace = await workspaceOf(b);
    execFileSync("mkfifo", [path.join(workspace, "go")]);
    const exec = b.api("POST", EXECUTE, { body: { command: "read x < go; echo done $x" } });
    const id = await until(
      async () => (await b.api("GET", `${EXECUTIONS}?outcome=pending`)).json.executions[0]?.execution_id,
      5000,
      "the execution to start",
    );

    const filler = fillUntilFree(fsys.dir);
    // Written off the event loop: the backend in this process hands the command its streams.
    await fs.promises.writeFile(path.join(workspace, "go"), "now\n");
    const answer = await exec;
    expect(answer.status).toBe(200);
    // It ran and its result exists: record_pending, never `pending`.
    expect(answer.json).toMatchObject({
      outcome: "succeeded",
      exit_code: 0,
      record_pending: true,
      stdout: "done now\n",
    });
    const byId = (await b.api("GET", `${EXECUTIONS}/${id}`)).json;
    expect(byId).toMatchObject({ outcome: "succeeded", record_pending: true });
    expect(b.logs.join("\n")).toContain("kept in memory until it can be stored");
    // A list says the same as a GET (both are the executions' domain), filters by what
    // the records say, and no longer counts it live.
    const list = (await b.api("GET", EXECUTIONS)).json;
    const said = ({ outcome, exit_code, record_pending, finished_at }: Record<string, unknown>) => ({
      outcome,
      exit_code,
      record_pending,
      finished_at,
    });
    expect(said(list.executions.find((e: { execution_id: string }) => e.execution_id === id))).toEqual(said(byId));
    expect(list.live_count).toBe(0);
    expect((await b.api("GET", `${EXECUTIONS}?outcome=pending`)).json.executions).toEqual([]);
    const succeeded = (await b.api("GET", `${EXECUTIONS}?outcome=succeeded`)).json.executions;
    expect(succeeded.map((e: { execution_id: string }) => e.execution_id)).toEqual([id]);

    fs.rmSync(filler);
    const stored = await until(
      async () => {
        const r = (await b.api("GET", `${EXECUTIONS}/${id}`)).json;
        return r.record_pending === false ? r : undefined;
      },
      20_000,
      "the end to be stored once there is room",
    );
    expect(stored).toMatchObject({ outcome: "succeeded", exit_code: 0, stdout: "done now\n" });
    const events = (await b.api("GET", `${EXECUTIONS}/${id}/events?limit=100`)).json.events as Array<{ type: string }>;
    expect(events.slice(-2).map((e) => e.type)).toEqual(["exit", "end"]);
  });
});

describeNeeding(["tmpfs", "pty"], "a full disk under a terminal session (a small tmpfs, as root)", () => {
  it("a client attached to a terminal whose end could not be stored at first is told the exit once it is", async (t) => {
    const fsys = smallTmpfs("24m");
    const b = await start({ eventFlushMs: 5 }, fsys.dir);
    t.onTestFinished(async () => {
      await b.stop();
      fsys.cleanup();
    });
    const key = `full-terminal-${process.pid}`;
    const exec = b.api("POST", EXECUTE, {
      body: { command: ["/bin/sh", "-c", "read x; echo done-$x"], tty: { cols: 80, rows: 24 } },
      headers: { "idempotency-key": key },
    });
    const id = await until(
      async () => (await b.api("GET", `${EXECUTIONS}?idempotency_key=${key}`)).json.executions[0]?.execution_id,
      5000,
      "the execution to be admitted",
    );
    const client = await openWebSocket(`ws+unix://${b.socketPath}:${EXECUTIONS}/${id}/terminal`);
    const control = () => client.text.map((m) => JSON.parse(m) as { type: string });
    await until(() => control().some((m) => m.type === "attached"), 5000, "the attach");

    const filler = fillUntilFree(fsys.dir);
    client.ws.send(Buffer.from("now\r"), { binary: true });
    // It ended; its end waits in memory for room to be stored.
    expect((await exec).json).toMatchObject({ outcome: "succeeded", exit_code: 0, record_pending: true });
    expect(b.logs.join("\n")).toContain("kept in memory until it can be stored");

    fs.rmSync(filler);
    await until(() => control().some((m) => m.type === "exit"), 20_000, "the client to be told the exit");
    expect(control().find((m) => m.type === "exit")).toMatchObject({ outcome: "succeeded", exit_code: 0 });
    expect(await client.closed).toMatchObject({ code: 1000 });
  });
});
