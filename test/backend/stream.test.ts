import fs from "node:fs";
import path from "node:path";
import { EventSource } from "eventsource";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EXECUTE, sharedBackend, startTestBackend, type TestBackend, until } from "./support.js";
import { curl, executionPath, type Frame, outputOf, parseFrames, SseConnection } from "./stream-support.js";

const connections: SseConnection[] = [];
afterEach(async () => {
  for (const c of connections.splice(0)) await c.close();
});

async function open(
  b: TestBackend,
  method: string,
  urlPath: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<SseConnection> {
  const conn = await SseConnection.open(b.socketPath, method, urlPath, opts);
  connections.push(conn);
  return conn;
}

const ids = (frames: Frame[]) => frames.map((f) => f.id);
const types = (frames: Frame[]) => frames.map((f) => f.event);
/** The frames the events route says the log holds, as our SSE writes them. */
async function framesOfLog(b: TestBackend, executionId: string): Promise<string> {
  const page = await b.api("GET", `${executionPath(executionId, "/events")}?limit=1000`);
  return page.json.events
    .map(
      (e: { sequence: number; type: string; data: unknown }) =>
        `id: ${e.sequence}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`,
    )
    .join("");
}

describe("execute with stream: true", () => {
  let b: TestBackend;
  let workspace: string;
  sharedBackend((backend, dir) => {
    b = backend;
    workspace = dir;
  });

  it("answers text/event-stream from the start, event by event, ending with exit and end", async () => {
    const conn = await open(b, "POST", EXECUTE, {
      body: { command: "printf a; sleep 0.4; printf b >&2; exit 3", stream: true },
    });
    expect(conn.status).toBe(200);
    expect(conn.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(conn.headers["cache-control"]).toBe("no-cache");
    // `started` and the first output arrive while the command still runs.
    await conn.waitFor((c) => outputOf(c.frames, "stdout") === "a", 3000, "the first output");
    const executionId = conn.frames[0]!.data.execution_id;
    expect((await b.api("GET", executionPath(executionId))).json.outcome).toBe("pending");

    await conn.done();
    expect(conn.ended).toBe(true);
    const frames = conn.frames;
    expect(types(frames)).toEqual(["started", "output", "output", "exit", "end"]);
    expect(ids(frames)).toEqual([1, 2, 3, 4, 5]);
    expect(frames[0]!.data).toEqual({
      execution_id: expect.stringMatching(/^exe_/),
      sandbox_id: expect.stringMatching(/^sbx_/),
      started_at: expect.any(String),
      boot: expect.stringMatching(/^boot_/),
    });
    expect(frames[1]!.data).toEqual({ stream: "stdout", offset: 0, data: "YQ==" });
    expect(frames[2]!.data).toEqual({ stream: "stderr", offset: 0, data: "Yg==" });
    expect(frames[3]!.data).toEqual({
      outcome: "failed",
      exit_code: 3,
      signal: null,
      system_error: null,
      record_pending: false,
      finished_at: expect.any(String),
      // What the command used (docs/operations.md, "Per-command usage"): its own figures or why not.
      usage: expect.objectContaining({ measured_by: expect.any(String), limits_hit: [] }),
    });
    expect(frames[4]!.data).toEqual({ state: "complete" });

    const record = (await b.api("GET", executionPath(executionId))).json;
    expect(record).toMatchObject({ outcome: "failed", exit_code: 3, stdout: "a", stderr: "b", last_event_id: 5 });
    // Exactly the framing of docs/protocol.md, and the same events as the events route.
    expect(conn.raw).toBe(await framesOfLog(b, executionId));
  });

  it("keeps the execution running when the client goes away", async () => {
    const conn = await open(b, "POST", EXECUTE, {
      body: { command: "sleep 0.4; echo done > left.txt", stream: true },
    });
    await conn.waitFor((c) => c.frames.length >= 1, 3000, "started");
    const executionId = conn.frames[0]!.data.execution_id;
    await conn.close();
    const record = (await b.api("GET", `${executionPath(executionId)}?wait_ms=5000`)).json;
    expect(record).toMatchObject({ outcome: "succeeded", exit_code: 0 });
    expect(fs.readFileSync(path.join(workspace, "left.txt"), "utf8")).toBe("done\n");
    // The whole log is there for a later reader.
    const replay = await open(b, "GET", executionPath(executionId, "/stream"));
    await replay.done();
    expect(types(replay.frames)).toEqual(["started", "exit", "end"]);
  });

  it("replays a streamed execute with the same Idempotency-Key from the log's start, running it once", async () => {
    const body = { command: "echo ran >> replays.txt; echo out", stream: true };
    const headers = { "idempotency-key": "stream-1" };
    const first = await (await open(b, "POST", EXECUTE, { body, headers })).done();
    const again = await (await open(b, "POST", EXECUTE, { body, headers })).done();
    expect(again.status).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(again.raw).toBe(first.raw);
    expect(types(again.frames)).toEqual(["started", "output", "exit", "end"]);
    expect(fs.readFileSync(path.join(workspace, "replays.txt"), "utf8")).toBe("ran\n");
  });

  it("puts at most 64 KiB of raw output in an event and 5 MiB in all, then says what it left out", async () => {
    const total = 6 * 1024 * 1024;
    const conn = await open(b, "POST", EXECUTE, {
      body: { command: `head -c ${total} /dev/zero | tr '\\0' x; printf end >&2`, stream: true },
    });
    await conn.done(20_000);
    const frames = conn.frames;
    const executionId = frames[0]!.data.execution_id;
    const outputs = frames.filter((f) => f.event === "output");
    const sizes = outputs.map((f) => Buffer.from(f.data.data, "base64").length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(64 * 1024);
    expect(sizes.reduce((a, n) => a + n, 0)).toBe(5 * 1024 * 1024);
    const gaps = frames.filter((f) => f.event === "gap");
    expect(gaps.length).toBeGreaterThan(0);
    // Per stream, output and gap events cover its bytes in order, without holes.
    for (const stream of ["stdout", "stderr"] as const) {
      let offset = 0;
      for (const f of frames.filter((x) => (x.event === "output" || x.event === "gap") && x.data.stream === stream)) {
        expect(f.data.offset).toBe(offset);
        offset += f.event === "gap" ? f.data.bytes : Buffer.from(f.data.data, "base64").length;
      }
      expect(offset).toBe(stream === "stdout" ? total : 3);
    }
    expect(types(frames).slice(-2)).toEqual(["exit", "end"]);
    expect(frames.at(-2)!.data.outcome).toBe("succeeded");

    // The full output stays readable by offset (what `sbx logs` reads for a gap).
    let offset = 0;
    let eof = false;
    let bytes = 0;
    while (!eof) {
      const chunk = await b.api(
        "GET",
        `${executionPath(executionId, "/output")}?stream=stdout&offset=${offset}&limit=${4 * 1024 * 1024}`,
      );
      expect(chunk.status).toBe(200);
      const data = Buffer.from(chunk.json.data, "base64");
      expect(data.every((c) => c === 0x78)).toBe(true);
      bytes += data.length;
      expect(chunk.json.next_offset).toBe(offset + data.length);
      offset = chunk.json.next_offset;
      eof = chunk.json.eof;
    }
    expect(bytes).toBe(total);
    const stderr = await b.api("GET", `${executionPath(executionId, "/output")}?stream=stderr`);
    expect(stderr.json).toEqual({ stream: "stderr", offset: 0, next_offset: 3, data: "ZW5k", eof: true });
  });
});

describe("GET …/stream", () => {
  let b: TestBackend;
  let executionId: string;
  beforeAll(async () => {
    b = await startTestBackend({ ssePingMs: 100, eventFlushMs: 5 });
    const res = await b.api("POST", EXECUTE, {
      body: { command: "printf one; sleep 0.1; printf two; printf err >&2" },
    });
    executionId = res.json.execution_id;
  });
  afterAll(async () => {
    await b.stop();
  });

  it("replays a finished execution and ends with end", async () => {
    const conn = await (await open(b, "GET", executionPath(executionId, "/stream"))).done();
    expect(conn.status).toBe(200);
    expect(conn.ended).toBe(true);
    expect(types(conn.frames)).toEqual(["started", "output", "output", "output", "exit", "end"]);
    expect(conn.raw).toBe(await framesOfLog(b, executionId));
  });

  it("resumes after Last-Event-ID with only later events", async () => {
    const all = parseFrames(await framesOfLog(b, executionId));
    const resumed = await (
      await open(b, "GET", executionPath(executionId, "/stream"), { headers: { "last-event-id": "3" } })
    ).done();
    expect(ids(resumed.frames)).toEqual([4, 5, 6]);
    expect(resumed.frames).toEqual(all.slice(3));

    const after = await (await open(b, "GET", `${executionPath(executionId, "/stream")}?after=5`)).done();
    expect(ids(after.frames)).toEqual([6]);
    // A reconnecting EventSource sends Last-Event-ID with its original URL: the header wins.
    const both = await (
      await open(b, "GET", `${executionPath(executionId, "/stream")}?after=1`, { headers: { "last-event-id": "4" } })
    ).done();
    expect(ids(both.frames)).toEqual([5, 6]);
    const atEnd = await (await open(b, "GET", `${executionPath(executionId, "/stream")}?after=6`)).done();
    expect(atEnd.frames).toEqual([]);
    expect(atEnd.ended).toBe(true);
  });

  it("refuses a cursor past the last event (422 invalid_cursor) and a malformed one (400)", async () => {
    const past = await b.api("GET", `${executionPath(executionId, "/stream")}?after=7`);
    expect(past.status).toBe(422);
    expect(past.json.error).toMatchObject({ code: "invalid_cursor", details: { after: 7, last_event_id: 6 } });
    const header = await b.api("GET", executionPath(executionId, "/stream"), { headers: { "last-event-id": "99" } });
    expect(header.json.error.code).toBe("invalid_cursor");
    const bad = await b.api("GET", `${executionPath(executionId, "/stream")}?after=-1`);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: "invalid_request", details: { field: "after" } });
    const missing = await b.api("GET", executionPath("exe_nope", "/stream"));
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("execution_not_found");
  });

  it("follows a running execution from a resume point and pings while idle", async () => {
    const started = await open(b, "POST", EXECUTE, {
      body: { command: "printf first; sleep 0.5; printf second", stream: true },
    });
    await started.waitFor((c) => outputOf(c.frames, "stdout") === "first", 3000, "the first output");
    const id = started.frames[0]!.data.execution_id;
    const resumed = await open(b, "GET", executionPath(id, "/stream"), { headers: { "last-event-id": "2" } });
    await resumed.done();
    expect(types(resumed.frames)).toEqual(["output", "exit", "end"]);
    expect(outputOf(resumed.frames, "stdout")).toBe("second");
    expect(resumed.frames[0]!.data.offset).toBe(5);
    // Idle for ~0.5 s with a 100 ms ping interval.
    expect(resumed.raw.split(": ping\n\n").length - 1).toBeGreaterThanOrEqual(2);
    expect(resumed.raw.startsWith(": ping\n\n")).toBe(true);
  });

  it("is read correctly by an independent client: the eventsource package", async () => {
    const agent = new Agent({ connect: { socketPath: b.socketPath } });
    const seen: Array<{ type: string; id: string; data: unknown }> = [];
    const es = new EventSource(`http://localhost${executionPath(executionId, "/stream")}`, {
      fetch: (url, init) =>
        undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        for (const type of ["started", "output", "exit", "end"]) {
          es.addEventListener(type, (ev) => {
            seen.push({ type, id: ev.lastEventId, data: JSON.parse(ev.data) });
            if (type === "end") resolve();
          });
        }
        es.addEventListener("error", (ev) => reject(new Error(`EventSource error: ${ev.message}`)));
      });
    } finally {
      es.close();
      await agent.close();
    }
    expect(seen.map((e) => [e.type, e.id])).toEqual([
      ["started", "1"],
      ["output", "2"],
      ["output", "3"],
      ["output", "4"],
      ["exit", "5"],
      ["end", "6"],
    ]);
    const stdout = seen
      .filter((e) => e.type === "output" && (e.data as { stream: string }).stream === "stdout")
      .map((e) => Buffer.from((e.data as { data: string }).data, "base64").toString())
      .join("");
    expect(stdout).toBe("onetwo");
  });

  it("is read correctly by an independent client: curl -N, with Last-Event-ID", async () => {
    const all = await curl(b.socketPath, executionPath(executionId, "/stream"));
    expect(all).toBe(await framesOfLog(b, executionId));
    const later = await curl(b.socketPath, executionPath(executionId, "/stream"), { "Last-Event-ID": "4" });
    expect(ids(parseFrames(later))).toEqual([5, 6]);
    // Live: curl sees the first output before the command ends.
    const live = open(b, "POST", EXECUTE, { body: { command: "printf early; sleep 0.4; printf late", stream: true } });
    const conn = await live;
    await conn.waitFor((c) => c.frames.length >= 1, 3000, "started");
    const id = conn.frames[0]!.data.execution_id;
    const followed = parseFrames(await curl(b.socketPath, executionPath(id, "/stream")));
    expect(types(followed)).toEqual(["started", "output", "output", "exit", "end"]);
    expect(outputOf(followed, "stdout")).toBe("earlylate");
  });
});

describe("stream faults", () => {
  let b: TestBackend | undefined;
  afterEach(async () => {
    await b?.stop();
    b = undefined;
  });

  async function finished(backend: TestBackend, command: string): Promise<string> {
    return (await backend.api("POST", EXECUTE, { body: { command } })).json.execution_id;
  }

  it("cut_after=N: N events, then the connection closes without end; resuming gets the rest", async () => {
    b = await startTestBackend({ eventFlushMs: 5, faults: "executions.stream:cut_after=2:once" });
    const id = await finished(b, "printf a; sleep 0.1; printf b");
    const cut = await (await open(b, "GET", executionPath(id, "/stream"))).done();
    expect(cut.broken).toBe(true);
    expect(ids(cut.frames)).toEqual([1, 2]);
    const rest = await (
      await open(b, "GET", executionPath(id, "/stream"), { headers: { "last-event-id": "2" } })
    ).done();
    expect(types(rest.frames)).toEqual(["output", "exit", "end"]);
  });

  it("cut_in_frame: half of the end frame, then the connection closes", async () => {
    b = await startTestBackend({
      eventFlushMs: 5,
      faults: "executions.stream:cut_in_frame:once,executions.stream:cut_in_frame=2:once",
    });
    const id = await finished(b, "printf a");
    const log = await framesOfLog(b, id);
    const lastFrame = log.slice(log.lastIndexOf("id: 4\n"));
    const cut = await (await open(b, "GET", executionPath(id, "/stream"))).done();
    expect(cut.broken).toBe(true);
    expect(ids(cut.frames)).toEqual([1, 2, 3]);
    expect(cut.raw).toBe(log.slice(0, log.length - lastFrame.length) + lastFrame.slice(0, lastFrame.length >> 1));
    const second = await (await open(b, "GET", executionPath(id, "/stream"))).done();
    expect(ids(second.frames)).toEqual([1]);
    expect(second.raw.length).toBeGreaterThan(log.indexOf("id: 2\n"));
  });

  it("reset: the output after the cursor comes as a reset snapshot, then the later events", async () => {
    b = await startTestBackend({ eventFlushMs: 5, faults: "executions.stream:reset:once" });
    const id = await finished(b, "printf one; sleep 0.1; printf two >&2; sleep 0.1; printf three");
    const conn = await (await open(b, "GET", `${executionPath(id, "/stream")}?after=2`)).done();
    expect(types(conn.frames)).toEqual(["reset", "exit", "end"]);
    expect(ids(conn.frames)).toEqual([4, 5, 6]);
    expect(conn.frames[0]!.data).toEqual({
      stdout: Buffer.from("onethree").toString("base64"),
      stderr: Buffer.from("two").toString("base64"),
      stdout_offset: 0,
      stderr_offset: 0,
    });
    // Once: the next resume is plain.
    const plain = await (await open(b, "GET", `${executionPath(id, "/stream")}?after=2`)).done();
    expect(types(plain.frames)).toEqual(["output", "output", "exit", "end"]);
  });

  it("on a streamed execute: cut_after, no_exit and record_pending shape what is sent", async () => {
    b = await startTestBackend({ faults: "execute:cut_after=1:once" });
    const cut = await (await open(b, "POST", EXECUTE, { body: { command: "sleep 0.2", stream: true } })).done();
    expect(cut.broken).toBe(true);
    expect(types(cut.frames)).toEqual(["started"]);
    const cutId = cut.frames[0]!.data.execution_id;
    // The command ran on.
    expect((await b.api("GET", `${executionPath(cutId)}?wait_ms=5000`)).json.outcome).toBe("succeeded");
    await b.stop();

    // Two answer faults: the first rule that fires wins, one per request.
    b = await startTestBackend({ faults: "execute:no_exit:once,execute:record_pending:once" });
    const noExit = await (await open(b, "POST", EXECUTE, { body: { command: "true", stream: true } })).done();
    expect(noExit.frames.at(-2)).toMatchObject({
      event: "exit",
      data: { outcome: "failed", exit_code: null, signal: null },
    });

    const pending = await (await open(b, "POST", EXECUTE, { body: { command: "true", stream: true } })).done();
    expect(pending.frames.at(-2)).toMatchObject({
      event: "exit",
      data: { outcome: "succeeded", exit_code: 0, record_pending: true },
    });
    expect(pending.frames.at(-1)!.data).toEqual({ state: "complete" });
  });

  it("on a streamed execute: unconfirmed answers 409 before streaming; the command runs to its end", async () => {
    b = await startTestBackend({ faults: "execute:unconfirmed:once" });
    const res = await b.api("POST", EXECUTE, {
      body: { command: "sleep 0.2; echo ok", stream: true },
      headers: { "idempotency-key": "unc-1" },
    });
    expect(res.status).toBe(409);
    expect(res.json.error).toMatchObject({
      code: "execution_result_unconfirmed",
      details: { execution_id: expect.stringMatching(/^exe_/), idempotency_key: "unc-1" },
    });
    const id = res.json.error.details.execution_id;
    expect((await b.api("GET", `${executionPath(id)}?wait_ms=5000`)).json).toMatchObject({
      outcome: "succeeded",
      stdout: "ok\n",
    });
  });

  it("on a streamed execute: drop closes the connection unanswered; malformed sends a broken frame", async () => {
    b = await startTestBackend({ faults: "execute:drop:once,execute:malformed:once" });
    const body = { command: "echo hi", stream: true };
    await expect(b.api("POST", EXECUTE, { body })).rejects.toThrow();
    const malformed = await (await open(b, "POST", EXECUTE, { body })).done();
    expect(malformed.status).toBe(200);
    expect(malformed.frames).toHaveLength(1);
    expect(malformed.frames[0]!.data).toBeUndefined();
    const list = await until(async () => {
      const l = (await b!.api("GET", "/api/v1/sandbox/default/executions")).json;
      return l.live_count === 0 && l.executions.length === 2 && l;
    });
    expect(list.executions.map((e: { outcome: string }) => e.outcome)).toEqual(["succeeded", "succeeded"]);
  });
});
