import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventDrafter, GAP_EVENT_INTERVAL_MS } from "../../src/backend/executions/event-drafter.js";
import { formatSseFrame, parseStreamCursor } from "../../src/backend/http/sse.js";
import {
  EXECUTE,
  processesWithArg,
  startTestBackend,
  type TestBackend,
  uniqueSleep,
  until,
  workspaceOf,
} from "./support.js";
import { executionPath, outputOf, SseConnection } from "./stream-support.js";

const AT = "2026-01-01T00:00:00.000Z";
const bytes = (text: string) => Buffer.from(text);
const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("EventDrafter", () => {
  it("coalesces chunks of one stream up to the chunk limit, in order, with covered offsets", () => {
    const d = new EventDrafter(1000, 4);
    d.output("stdout", bytes("ab"), AT);
    d.output("stdout", bytes("cde"), AT);
    d.output("stderr", bytes("x"), AT);
    d.output("stdout", bytes("f"), AT);
    expect(d.take()).toEqual([
      {
        type: "output",
        at: AT,
        data: { stream: "stdout", offset: 0, data: b64("abcd") },
        ends: { stdout: 4, stderr: 0 },
      },
      { type: "output", at: AT, data: { stream: "stdout", offset: 4, data: b64("e") }, ends: { stdout: 5, stderr: 0 } },
      { type: "output", at: AT, data: { stream: "stderr", offset: 0, data: b64("x") }, ends: { stdout: 5, stderr: 1 } },
      { type: "output", at: AT, data: { stream: "stdout", offset: 5, data: b64("f") }, ends: { stdout: 6, stderr: 1 } },
    ]);
    expect(d.hasDrafts).toBe(false);
  });

  it("splits a large chunk into events of at most the chunk limit", () => {
    const d = new EventDrafter(1000, 3);
    d.output("stdout", bytes("abcdefgh"), AT);
    expect(d.take().map((e) => (e.data as { data: string }).data)).toEqual([b64("abc"), b64("def"), b64("gh")]);
  });

  it("past the budget, counts output into one gap per stream and interval, and all of it at the end", () => {
    const d = new EventDrafter(5, 64);
    d.output("stdout", bytes("abc"), AT);
    d.output("stderr", bytes("defg"), AT); // 2 fit, 2 do not
    d.output("stdout", bytes("hi"), AT); // none fit
    expect(d.hasPendingGap).toBe(true);
    d.releaseGaps(10_000, false);
    d.output("stdout", bytes("jk"), AT);
    d.releaseGaps(10_000 + GAP_EVENT_INTERVAL_MS - 1, false); // not due yet
    d.output("stderr", bytes("l"), AT);
    d.releaseGaps(10_001, true);
    const events = d.take();
    expect(events.map((e) => [e.type, e.data, e.ends])).toEqual([
      ["output", { stream: "stdout", offset: 0, data: b64("abc") }, { stdout: 3, stderr: 0 }],
      ["output", { stream: "stderr", offset: 0, data: b64("de") }, { stdout: 3, stderr: 2 }],
      ["gap", { stream: "stdout", offset: 3, bytes: 2 }, { stdout: 5, stderr: 2 }],
      ["gap", { stream: "stderr", offset: 2, bytes: 2 }, { stdout: 5, stderr: 4 }],
      ["gap", { stream: "stdout", offset: 5, bytes: 2 }, { stdout: 7, stderr: 4 }],
      ["gap", { stream: "stderr", offset: 4, bytes: 1 }, { stdout: 7, stderr: 5 }],
    ]);
    expect(d.hasPendingGap).toBe(false);
  });

  it("puts `started` first even when output was drafted before it", () => {
    const d = new EventDrafter();
    d.output("stderr", bytes("sbx: x: command not found\n"), AT);
    d.unshift("started", { execution_id: "exe_1" }, AT);
    d.push("exit", { outcome: "failed" }, AT);
    expect(d.take().map((e) => [e.type, e.ends])).toEqual([
      ["started", { stdout: 0, stderr: 0 }],
      ["output", { stdout: 0, stderr: 26 }],
      ["exit", { stdout: 0, stderr: 26 }],
    ]);
  });
});

describe("SSE framing and cursors", () => {
  it("frames an event exactly", () => {
    expect(formatSseFrame(7, "exit", '{"outcome":"succeeded"}')).toBe(
      'id: 7\nevent: exit\ndata: {"outcome":"succeeded"}\n\n',
    );
  });

  it.each([
    [undefined, null, 0],
    [undefined, "12", 12],
    ["5", "12", 5],
    ["", "3", 3],
    [" 4 ", null, 4],
    ["x", null, null],
    [undefined, "-1", null],
    [undefined, "1.5", null],
    [undefined, "", null],
  ])("Last-Event-ID %j, after %j → %j", (header, after, cursor) => {
    expect(parseStreamCursor(header, after)).toBe(cursor);
  });
});

/** One part of a gated command's output: its text (printf-safe) and the stream it goes to. */
type Part = { text: string; stream?: "stdout" | "stderr" };

/**
 * Runs a command that prints each part after the one before it is stored as an event
 * of its own: part i waits for a file `go<i>` in the workspace, which the test makes
 * once the record's last_event_id says the event before it is stored (`started` is 1,
 * part i is i + 2). So no two parts are drafted into one output event, nor stored out
 * of order across streams, however late the backend reads its pipes. Resolves with
 * the execution's id once it ended.
 */
async function runGated(b: TestBackend, parts: Part[]): Promise<string> {
  const workspace = await workspaceOf(b);
  const command = parts
    .map(({ text, stream }, i) => {
      const print = `printf ${text}${stream === "stderr" ? " >&2" : ""}`;
      return i === 0 ? print : `until [ -e go${i} ]; do sleep 0.01; done; ${print}`;
    })
    .join("; ");
  const answer = b.api("POST", EXECUTE, { body: { command } });
  const id: string = await until(
    async () => (await b.api("GET", "/api/v1/sandbox/default/executions")).json.executions[0]?.execution_id,
  );
  for (let i = 1; i < parts.length; i++) {
    await until(
      async () => (await b.api("GET", executionPath(id))).json.last_event_id >= i + 1,
      5000,
      `part ${i - 1} stored as event ${i + 1}`,
    );
    fs.writeFileSync(path.join(workspace, `go${i}`), "");
  }
  expect((await answer).status).toBe(200);
  return id;
}

describe("the event log", () => {
  let b: TestBackend | undefined;
  afterEach(async () => {
    await b?.stop();
    b = undefined;
  });

  it("pages events with has_more and next_cursor, and refuses cursors past the end", async () => {
    b = await startTestBackend({ eventFlushMs: 5 });
    const id = await runGated(b, [{ text: "a" }, { text: "b" }, { text: "c" }]);
    const url = executionPath(id, "/events");
    const first = await b.api("GET", `${url}?limit=2`);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      events: [
        { sequence: 1, type: "started", at: expect.any(String), data: expect.objectContaining({ execution_id: id }) },
        { sequence: 2, type: "output", at: expect.any(String), data: { stream: "stdout", offset: 0, data: b64("a") } },
      ],
      has_more: true,
      next_cursor: 2,
    });
    const second = await b.api("GET", `${url}?after_sequence=${first.json.next_cursor}&limit=3`);
    expect(second.json.events.map((e: { type: string }) => e.type)).toEqual(["output", "output", "exit"]);
    expect(second.json).toMatchObject({ has_more: true, next_cursor: 5 });
    const last = await b.api("GET", `${url}?after_sequence=5`);
    expect(last.json).toEqual({
      events: [{ sequence: 6, type: "end", at: expect.any(String), data: { state: "complete" } }],
      has_more: false,
      next_cursor: 6,
    });
    expect(await b.api("GET", `${url}?after_sequence=6`).then((r) => r.json)).toEqual({
      events: [],
      has_more: false,
      next_cursor: 6,
    });
    const past = await b.api("GET", `${url}?after_sequence=7`);
    expect(past.status).toBe(422);
    expect(past.json.error.code).toBe("invalid_cursor");
    for (const q of ["limit=0", "limit=1001", "after_sequence=x"]) {
      expect((await b.api("GET", `${url}?${q}`)).status, q).toBe(400);
    }
    expect((await b.api("GET", executionPath("exe_nope", "/events"))).status).toBe(404);
  });

  it("trims to the retention and answers an older cursor with a reset snapshot, then the events after it", async () => {
    b = await startTestBackend({ eventRetention: 3, eventFlushMs: 5 });
    const stdout: Part[] = ["1", "2", "3", "4", "5"].map((text) => ({ text }));
    const id = await runGated(b, [...stdout, { text: "E", stream: "stderr" }]);
    const record = (await b.api("GET", executionPath(id))).json;
    // started, 5 stdout outputs, 1 stderr output, exit, end
    expect(record.last_event_id).toBe(9);

    const page = await b.api("GET", `${executionPath(id, "/events")}?after_sequence=0`);
    expect(page.json.events.map((e: { sequence: number; type: string }) => [e.sequence, e.type])).toEqual([
      [6, "reset"],
      [7, "output"],
      [8, "exit"],
      [9, "end"],
    ]);
    expect(page.json.events[0].data).toEqual({
      stdout: b64("12345"),
      stderr: "",
      stdout_offset: 0,
      stderr_offset: 0,
    });

    // The stream does the same; a cursor inside what is retained gets no reset.
    const conn = await (await SseConnection.open(b.socketPath, "GET", executionPath(id, "/stream"))).done();
    await conn.close();
    expect(conn.frames.map((f) => [f.id, f.event])).toEqual([
      [6, "reset"],
      [7, "output"],
      [8, "exit"],
      [9, "end"],
    ]);
    expect(outputOf(conn.frames, "stderr")).toBe("E");
    const resumed = await (
      await SseConnection.open(b.socketPath, "GET", executionPath(id, "/stream"), { headers: { "last-event-id": "6" } })
    ).done();
    await resumed.close();
    expect(resumed.frames.map((f) => f.id)).toEqual([7, 8, 9]);
  });

  it("reads the full output by offset, and validates the request", async () => {
    b = await startTestBackend();
    const workspace = await workspaceOf(b);
    // It prints the rest only once the test has read what came before (the file `go`).
    const command = "printf 0123456789; until [ -e go ]; do sleep 0.01; done; printf abc";
    const pending = b.api("POST", EXECUTE, { body: { command } });
    const running = await until(async () => {
      const list = (await b!.api("GET", "/api/v1/sandbox/default/executions")).json;
      const e = list.executions[0];
      return e?.last_event_id >= 2 && e;
    });
    const url = executionPath(running.execution_id, "/output");
    const early = await b.api("GET", `${url}?stream=stdout&offset=4&limit=3`);
    expect(early.json).toEqual({ stream: "stdout", offset: 4, next_offset: 7, data: b64("456"), eof: false });
    const tail = await b.api("GET", `${url}?offset=7`);
    expect(tail.json).toEqual({ stream: "stdout", offset: 7, next_offset: 10, data: b64("789"), eof: false });
    fs.writeFileSync(path.join(workspace, "go"), "");
    await pending;
    const done = await b.api("GET", `${url}?offset=7`);
    expect(done.json).toEqual({ stream: "stdout", offset: 7, next_offset: 13, data: b64("789abc"), eof: true });
    expect((await b.api("GET", `${url}?offset=13`)).json).toMatchObject({ next_offset: 13, data: "", eof: true });
    const past = await b.api("GET", `${url}?offset=14`);
    expect(past.status).toBe(422);
    expect(past.json.error).toMatchObject({
      code: "invalid_cursor",
      details: { stream: "stdout", offset: 14, size: 13 },
    });
    for (const [q, field] of [
      ["stream=stdin", "stream"],
      ["limit=0", "limit"],
      [`limit=${4 * 1024 * 1024 + 1}`, "limit"],
      ["offset=-1", "offset"],
    ]) {
      const res = await b.api("GET", `${url}?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json.error.details.field).toBe(field);
    }
    // The files live with the sandbox, private to the user.
    const sandbox = (await b.api("GET", "/api/v1/sandbox/default")).json;
    const file = path.join(b.dataDir, "sandboxes", sandbox.sandbox_id, "executions", running.execution_id, "stdout");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it("survives a crash up to the last batch; restart recovery ends the log with exit unknown and end incomplete", async () => {
    const first = await startTestBackend({ faults: "execute:drop:once" });
    b = first;
    const sleep = uniqueSleep(60);
    await expect(first.api("POST", EXECUTE, { body: { command: `printf before; sleep ${sleep}` } })).rejects.toThrow();
    const running = await until(async () => {
      const list = (await first.api("GET", "/api/v1/sandbox/default/executions")).json;
      const e = list.executions[0];
      return e?.last_event_id >= 2 && e;
    });
    const id = running.execution_id;
    await until(() => processesWithArg(sleep).length === 1, 5000, "sleep to start");
    await first.stop({ simulateCrash: true });
    expect(processesWithArg(sleep)).toHaveLength(1);

    b = await startTestBackend({}, first.dir);
    await until(() => processesWithArg(sleep).length === 0, 3000, "the lost group to end");
    const events = (await b.api("GET", executionPath(id, "/events"))).json.events;
    expect(events.map((e: { sequence: number; type: string }) => [e.sequence, e.type])).toEqual([
      [1, "started"],
      [2, "output"],
      [3, "exit"],
      [4, "end"],
    ]);
    expect(events[1].data).toEqual({ stream: "stdout", offset: 0, data: b64("before") });
    expect(events[2].data).toEqual({
      outcome: "unknown",
      exit_code: null,
      signal: null,
      system_error: "exec_stream_lost",
      record_pending: false,
      finished_at: null,
    });
    expect(events[3].data).toEqual({ state: "incomplete", reason: "exec_stream_lost" });
    expect((await b.api("GET", executionPath(id))).json).toMatchObject({
      outcome: "unknown",
      system_error: "exec_stream_lost",
      last_event_id: 4,
    });
    const conn = await (await SseConnection.open(b.socketPath, "GET", executionPath(id, "/stream"))).done();
    await conn.close();
    expect(conn.frames.map((f) => f.event)).toEqual(["started", "output", "exit", "end"]);
  });

  it("after a crash, output that reached the files but no committed batch is a gap, readable by offset", async () => {
    // Batches are never committed by the timer here: only `started` (committed at once) survives.
    const first = await startTestBackend({ faults: "execute:drop:once", eventFlushMs: 60_000 });
    b = first;
    await expect(first.api("POST", EXECUTE, { body: { command: "printf unflushed; sleep 60" } })).rejects.toThrow();
    const sandbox = (await first.api("GET", "/api/v1/sandbox/default")).json;
    const id = await until(
      async () => (await first.api("GET", "/api/v1/sandbox/default/executions")).json.executions[0]?.execution_id,
    );
    const file = path.join(first.dataDir, "sandboxes", sandbox.sandbox_id, "executions", id, "stdout");
    await until(() => fs.existsSync(file) && fs.statSync(file).size === 9, 5000, "the output file");
    await first.stop({ simulateCrash: true });

    b = await startTestBackend({}, first.dir);
    const events = (await b.api("GET", executionPath(id, "/events"))).json.events;
    expect(events.map((e: { type: string; data: unknown }) => [e.type, e.type === "started" ? null : e.data])).toEqual([
      ["started", null],
      ["gap", { stream: "stdout", offset: 0, bytes: 9 }],
      ["exit", expect.objectContaining({ outcome: "unknown", system_error: "exec_stream_lost" })],
      ["end", { state: "incomplete", reason: "exec_stream_lost" }],
    ]);
    expect((await b.api("GET", executionPath(id, "/output"))).json).toEqual({
      stream: "stdout",
      offset: 0,
      next_offset: 9,
      data: b64("unflushed"),
      eof: true,
    });
  });
});
