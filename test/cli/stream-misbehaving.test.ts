// `sbx exec --stream` against a server whose event streams drop, break inside a
// frame, and reset: sbx resumes by reading (Last-Event-ID), never re-sends the POST,
// and never lets a truncated stream pass for a result. In-process through main();
// every test has its own home and server, so they run concurrently.

import { describe, expect, it, type TestContext } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { makeHome, removeHome } from "../support/cli.js";
import { onRequestWithKey, useClientDeadlines } from "../support/client-deadline.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { until } from "../support/wait.js";
import {
  type Answer,
  executionRecord,
  type MisbehavingServer,
  outputFrame,
  type ReceivedRequest,
  sseFrame,
  startMisbehavingServer,
} from "../support/misbehaving-server.js";

const EID = "exe_stream1";
const started = sseFrame(1, "started", {
  execution_id: EID,
  sandbox_id: "default",
  started_at: "2026-11-29T10:00:00Z",
});
const exitFrame = (id: number, exit_code = 0) =>
  sseFrame(id, "exit", {
    outcome: exit_code === 0 ? "succeeded" : "failed",
    exit_code,
    signal: null,
    system_error: null,
    record_pending: false,
    finished_at: "2026-11-29T10:00:01Z",
  });
const end = (id: number, state = "complete", reason?: string) =>
  sseFrame(id, "end", { state, ...(reason ? { reason } : {}) });

async function setup(t: TestContext, onPost: Answer, onGet: (req: ReceivedRequest) => Answer) {
  const home = makeHome("sbx-e2e-sse-");
  t.onTestFinished(() => removeHome(home));
  const server: MisbehavingServer = await startMisbehavingServer((req) =>
    req.method === "POST" ? onPost : onGet(req),
  );
  t.onTestFinished(() => server.close());
  return { home, server };
}

const streamGets = (s: MisbehavingServer) => s.requests.filter((r) => r.method === "GET" && r.path.includes("/stream"));

const deadline = useClientDeadlines();

describe.concurrent("exec --stream against a misbehaving stream", () => {
  it("a stream that drops and then ends without an exit event is outcome_unknown (255), one POST", async (t) => {
    const { home, server } = await setup(
      t,
      { kind: "sse", chunks: [started, outputFrame(2, "stdout", 0, "one\n")], drop: true },
      () => ({ kind: "sse", chunks: [end(3, "incomplete", "exec_stream_lost")] }),
    );
    const r = await runMain(["exec", "--stream", "--api-url", server.url, "--", "echo", "one"], { home });
    expect(r.code).toBe(255);
    expect(r.stdout).toBe("one\n");
    expect(r.stderr).toMatch(/may have run/);
    expect(server.posts()).toHaveLength(1);
    const gets = streamGets(server);
    expect(gets.length).toBeGreaterThanOrEqual(1);
    expect(gets[0]!.headers["last-event-id"]).toBe("2");
    expect(gets[0]!.path).toBe(`/api/v1/sandbox/default/executions/${EID}/stream`);
    const shown = await runMainJson<ReceiptDocument>(["receipts", "show", EID, "--json"], { home });
    expect(shown.doc).toMatchObject({ classification: "outcome_unknown", execution_id: EID, stdout: "one\n" });
  });

  it("a drop inside the final frame resumes after the last complete event, without duplicate output", async (t) => {
    const last = outputFrame(3, "stdout", 2, "b\n");
    const { home, server } = await setup(
      t,
      {
        kind: "sse",
        chunks: [started, outputFrame(2, "stdout", 0, "a\n"), last.slice(0, last.length - 5)],
        drop: true,
      },
      (req) =>
        req.headers["last-event-id"] === "2"
          ? { kind: "sse", chunks: [last, exitFrame(4), end(5)] }
          : { kind: "json", status: 500, body: { error: { code: "wrong_cursor", message: "unexpected cursor" } } },
    );
    const r = await runMain(["exec", "--stream", "--api-url", server.url, "--", "printf", "a\\nb\\n"], { home });
    expect(r.stdout).toBe("a\nb\n");
    expect(r.code).toBe(0);
    expect(server.posts()).toHaveLength(1);
    expect(streamGets(server).map((g) => g.headers["last-event-id"])).toEqual(["2"]);
  });

  it("a reset on reconnect replaces what was accumulated instead of appending to it", async (t) => {
    const snapshot = sseFrame(3, "reset", {
      stdout: Buffer.from("snap\n").toString("base64"),
      stderr: "",
      stdout_offset: 0,
      stderr_offset: 0,
    });
    const { home, server } = await setup(
      t,
      { kind: "sse", chunks: [started, outputFrame(2, "stdout", 0, "old\n")], drop: true },
      () => ({ kind: "sse", chunks: [snapshot, outputFrame(4, "stdout", 5, "more\n"), exitFrame(5), end(6)] }),
    );
    const { result, doc } = await runMainJson<ReceiptDocument>(
      ["exec", "--stream", "--json", "--api-url", server.url, "--", "true"],
      { home },
    );
    expect(result.code).toBe(0);
    expect(doc).toMatchObject({ classification: "succeeded", stdout: "snap\nmore\n", execution_id: EID });
    expect(server.posts()).toHaveLength(1);
  });

  it("a stream that stays dropped past the client deadline is not success", async (t) => {
    const { home, server } = await setup(t, { kind: "sse", chunks: [started], drop: true }, () => ({ kind: "close" }));
    // It passes once the stream was tried again after the drop (test/support/client-deadline.ts).
    const passes = deadline(1238);
    const running = runMain(["exec", "--stream", "--client-timeout", "1238ms", "--api-url", server.url, "--", "true"], {
      home,
    });
    await until(() => streamGets(server).length >= 1, 10_000, "the stream to be read again");
    passes.abort();
    const r = await running;
    expect(r.code).toBe(255);
    expect(server.posts()).toHaveLength(1);
    expect(streamGets(server).length).toBeGreaterThanOrEqual(1);
  });

  it("detach returns once started, recording the execution as running", async (t) => {
    const { home, server } = await setup(
      t,
      { kind: "sse", chunks: [started, outputFrame(2, "stdout", 0, "x")] },
      () => ({
        kind: "hang",
      }),
    );
    const r = await runMain(["exec", "--detach", "--api-url", server.url, "--", "sleep", "100"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^rcp_\\w+\\t${EID}\\n$`));
    const shown = await runMainJson<ReceiptDocument>(["receipts", "show", EID, "--json"], { home });
    expect(shown.doc.classification).toBe("running");
  });
});

describe.concurrent("observations go where the request went", () => {
  it("refresh, wait and recover read from the receipt's backend, whatever the current profile says", async (t) => {
    const record = executionRecord(null, {
      execution_id: "exe_there",
      idempotency_key: "key-of-this-receipt",
      stdout: "",
      outcome: "succeeded",
      exit_code: 0,
    });
    const { home, server: original } = await setup(t, { kind: "hang" }, (req) =>
      req.path.includes("/executions/exe_there")
        ? { kind: "json", status: 200, body: record }
        : { kind: "json", status: 200, body: { executions: [record], next_cursor: null, live_count: 0 } },
    );
    const other = await startMisbehavingServer({
      kind: "json",
      status: 500,
      body: { error: { code: "wrong", message: "wrong backend" } },
    });
    t.onTestFinished(() => other.close());
    // The client's deadline passes once the server has the request (test/support/client-deadline.ts).
    const passes = deadline(1239);
    t.onTestFinished(onRequestWithKey("http.server.request.start", "key-of-this-receipt", () => passes.abort()));
    const sent = await runMainJson<ReceiptDocument>(
      [
        "exec",
        "--json",
        "--client-timeout",
        "1239ms",
        "--idempotency-key",
        "key-of-this-receipt",
        "--api-url",
        original.url,
        "--",
        "true",
      ],
      { home },
    );
    expect(sent.doc.classification).toBe("local_timeout");
    expect((await runMain(["profile", "add", "elsewhere", "--api-url", other.url, "--use"], { home })).code).toBe(0);
    const refreshed = await runMainJson<ReceiptDocument>(["receipts", "refresh", sent.doc.receipt_id, "--json"], {
      home,
    });
    expect(refreshed.doc).toMatchObject({ classification: "succeeded", execution_id: "exe_there" });
    expect(original.requests.filter((r) => r.method === "GET")[0]!.path).toContain(
      `idempotency_key=${encodeURIComponent(sent.doc.idempotency_key)}`,
    );
    expect(other.requests).toHaveLength(0);
    expect(original.posts()).toHaveLength(1);
  });
});

describe.concurrent("review regressions", () => {
  it("a server that ignores ?idempotency_key= never settles a receipt with someone else's execution", async (t) => {
    const theirs = executionRecord(null, {
      execution_id: "exe_theirs",
      idempotency_key: "someone-else",
      stdout: "not yours\n",
    });
    const { home, server } = await setup(t, { kind: "close" }, () => ({
      kind: "json",
      status: 200,
      body: { executions: [theirs], next_cursor: null, live_count: 0 },
    }));
    const sent = await runMainJson<ReceiptDocument>(
      ["exec", "--json", "--api-url", server.url, "--", "rm", "-rf", "x"],
      {
        home,
      },
    );
    expect(sent.result.code).toBe(255);
    const waited = await runMain(["receipts", "wait", sent.doc.receipt_id, "--timeout", "20s"], { home });
    expect(waited.stdout).not.toContain("not yours");
    expect(waited.code).toBe(255);
    expect(waited.stderr).toContain("does not know the execution");
    const shown = await runMainJson<ReceiptDocument>(["receipts", "show", sent.doc.receipt_id, "--json"], { home });
    expect(shown.doc.classification).toBe("outcome_unknown");
    expect(shown.doc.execution_id).toBeNull();
  });

  it("--detach on a 409 request_in_progress is in doubt (255), not 'started'", async (t) => {
    const { home, server } = await setup(
      t,
      { kind: "json", status: 409, body: { error: { code: "request_in_progress", message: "busy" } } },
      () => ({ kind: "hang" }),
    );
    const r = await runMain(["exec", "--detach", "--api-url", server.url, "--", "sleep", "1"], { home });
    expect(r.code).toBe(255);
    expect(r.stdout).not.toContain("null");
    expect(r.stderr).toContain("in progress");
  });

  it("logs -f of an execution the backend does not know ends with an error instead of reconnecting forever", async (t) => {
    const { home, server } = await setup(t, { kind: "hang" }, () => ({
      kind: "json",
      status: 404,
      body: { error: { code: "execution_not_found", message: "no such execution" } },
    }));
    // A whole id (a prefix would be looked up in the list first): the stream itself is refused.
    const r = await runMain(["logs", "exe_0123456789abcdef0123", "-f", "--api-url", server.url], { home });
    expect(r.code).toBe(125);
    expect(r.stderr).toContain("execution_not_found");
  });

  it("resubmit refuses a receipt whose result is known, unless --force", async (t) => {
    const { home, server } = await setup(t, { kind: "json", status: 200, body: executionRecord(null, {}) }, () => ({
      kind: "hang",
    }));
    const sent = await runMainJson<ReceiptDocument>(["exec", "--json", "--api-url", server.url, "--", "true"], {
      home,
    });
    expect(sent.doc.classification).toBe("succeeded");
    const refused = await runMain(["receipts", "resubmit", sent.doc.receipt_id], { home });
    expect(refused.code).toBe(125);
    expect(server.posts()).toHaveLength(1);
    const forced = await runMain(["receipts", "resubmit", sent.doc.receipt_id, "--force"], { home });
    expect(forced.code).toBe(0);
    expect(server.posts()).toHaveLength(2);
    expect(server.posts()[1]!.body.equals(server.posts()[0]!.body)).toBe(true);
  });
});
