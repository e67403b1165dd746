// `sbx exec` against a server that answers every way docs/classification.md knows, and
// every way real servers misbehave: the classification, the exit code, the one
// stderr line with the next command, and exactly one POST carrying the receipt's key.
// In-process through main().

import { createHash } from "node:crypto";
import { describe, expect, it, type TestContext } from "vitest";
import type { DetailedReceiptDocument, ReceiptDocument } from "../../src/receipts/document.js";
import { lines, makeHome, removeHome, type SbxResult } from "../support/cli.js";
import { useClientDeadlines } from "../support/client-deadline.js";
import { runMain, runMainJson } from "../support/in-process.js";
import {
  type Behaviour,
  behaviours,
  type MisbehavingServer,
  refusedPort,
  startMisbehavingServer,
} from "../support/misbehaving-server.js";
import { until } from "../support/wait.js";

// Tests run concurrently: each cleans up after itself (onTestFinished), not in a shared afterEach.
async function setup(t: TestContext, b: Behaviour): Promise<{ home: string; server: MisbehavingServer }> {
  const home = makeHome("sbx-e2e-mis-");
  t.onTestFinished(() => removeHome(home));
  const server = await startMisbehavingServer(b);
  t.onTestFinished(() => server.close());
  return { home, server };
}

interface Case {
  name: string;
  behaviour: () => Behaviour;
  classification: string;
  exit: number;
  mayHaveRun: boolean;
  /** The next command the stderr line must name, or null for no such line. */
  next: "wait" | "resubmit" | null;
  json?: boolean;
  /** --client-timeout of this many ms, passed once the server has the request (test/support/client-deadline.ts). */
  deadlineOnceSent?: number;
  /** More that must hold for the receipt document. */
  doc?: Partial<ReceiptDocument>;
  /** Substrings of the stderr line. */
  stderrHas?: string[];
}

const cases: Case[] = [
  {
    name: "record_pending (with outcome succeeded)",
    behaviour: behaviours.recordPending,
    classification: "record_pending",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    doc: { record_pending: true },
    stderrHas: ["do not resubmit"],
  },
  {
    name: "failed, exit_code 3",
    behaviour: () => behaviours.failed(3),
    classification: "failed",
    exit: 3,
    mayHaveRun: true,
    next: null,
    doc: { exit_code: 3, outcome: "failed" },
  },
  {
    name: "failed, killed by SIGKILL",
    behaviour: () => behaviours.killedBySignal("SIGKILL"),
    classification: "failed",
    exit: 137,
    mayHaveRun: true,
    next: null,
    doc: { signal: "SIGKILL", exit_code: null },
  },
  {
    name: "timed_out",
    behaviour: behaviours.timedOut,
    classification: "timed_out",
    exit: 124,
    mayHaveRun: true,
    next: null,
    stderrHas: ["timeout"],
  },
  {
    name: "cancelled",
    behaviour: behaviours.cancelled,
    classification: "cancelled",
    exit: 130,
    mayHaveRun: true,
    next: null,
    stderrHas: ["cancelled"],
  },
  {
    name: "outcome unknown, system_error exec_stream_lost",
    behaviour: behaviours.streamLost,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    doc: { system_error: "exec_stream_lost" },
    stderrHas: ["exec_stream_lost", "may have run"],
  },
  {
    name: "200 with a non-JSON body",
    behaviour: behaviours.nonJson,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    doc: { http_status: 200 },
  },
  {
    name: "200 with a non-JSON body (--json)",
    behaviour: behaviours.nonJson,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    json: true,
  },
  {
    name: "200 outcome succeeded without exit_code",
    behaviour: behaviours.succeededWithoutExitCode,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
  },
  {
    name: "200 terminal failed without exit_code or signal",
    behaviour: behaviours.failedWithoutExitOrSignal,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
  },
  {
    name: "409 execution_result_unconfirmed",
    behaviour: () => behaviours.resultUnconfirmed("exe_unconfirmed1"),
    classification: "result_unconfirmed",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    doc: { execution_id: "exe_unconfirmed1", http_status: 409 },
    stderrHas: ["exe_unconfirmed1"],
  },
  {
    name: "409 execution_result_unconfirmed (--json)",
    behaviour: () => behaviours.resultUnconfirmed("exe_unconfirmed2"),
    classification: "result_unconfirmed",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    json: true,
    doc: { execution_id: "exe_unconfirmed2" },
  },
  {
    name: "409 request_in_progress",
    behaviour: behaviours.requestInProgress,
    classification: "in_progress",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
  },
  {
    name: "422 idempotency_key_reused",
    behaviour: behaviours.keyReused,
    classification: "rejected",
    exit: 125,
    mayHaveRun: false,
    next: null,
    doc: {
      http_status: 422,
      error: { code: "idempotency_key_reused", message: "this key was used with a different body" },
    },
    stderrHas: ["idempotency_key_reused", "nothing ran"],
  },
  {
    name: "400 validation",
    behaviour: behaviours.validation,
    classification: "rejected",
    exit: 125,
    mayHaveRun: false,
    next: null,
    stderrHas: ["invalid_request", "nothing ran"],
  },
  {
    name: "401 unauthorized",
    behaviour: () => behaviours.unauthorized(),
    classification: "rejected",
    exit: 125,
    mayHaveRun: false,
    next: null,
    json: true,
    stderrHas: ["401"],
  },
  {
    name: "404 sandbox_not_found",
    behaviour: behaviours.sandboxNotFound,
    classification: "rejected",
    exit: 125,
    mayHaveRun: false,
    next: null,
    stderrHas: ["404", "sandbox_not_found"],
  },
  {
    name: "503 not_started with a retry hint",
    behaviour: () => behaviours.notStarted(2500, 3),
    classification: "not_started",
    exit: 75,
    mayHaveRun: false,
    next: "resubmit",
    doc: { retry_after_ms: 2500, http_status: 503 },
    stderrHas: ["nothing ran", "retry after 3s"],
  },
  {
    name: "503 not_started with only Retry-After (--json)",
    behaviour: () => behaviours.notStarted(null as unknown as number, 4),
    classification: "not_started",
    exit: 75,
    mayHaveRun: false,
    next: "resubmit",
    json: true,
    doc: { retry_after_ms: 4000 },
  },
  {
    name: "bare 503 (text/plain)",
    behaviour: behaviours.bare503,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    doc: { http_status: 503, retry_after_ms: null },
  },
  {
    name: "502 gateway HTML page",
    behaviour: behaviours.gateway502,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    doc: { http_status: 502 },
  },
  {
    name: "504 gateway timeout",
    behaviour: behaviours.gateway504,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    json: true,
  },
  {
    name: "socket reset after the request was read",
    behaviour: behaviours.reset,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    // Node says "read ECONNRESET"; the release binary's fetch words it otherwise.
    doc: { error: { code: "ECONNRESET", message: expect.stringContaining("ECONNRESET") } },
  },
  {
    name: "socket closed after the request was read",
    behaviour: behaviours.close,
    classification: "outcome_unknown",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    json: true,
  },
  {
    name: "no answer before --client-timeout",
    behaviour: behaviours.hang,
    classification: "local_timeout",
    exit: 255,
    mayHaveRun: true,
    next: "wait",
    deadlineOnceSent: 1236,
    doc: { http_status: null, error: { code: "local_deadline", message: expect.any(String) } },
    stderrHas: ["deadline"],
  },
];

function sha256(b: Buffer): string {
  return createHash("sha256").update(b).digest("hex");
}

/** The receipt, from exec --json, or else from `receipts show KEY --json`. */
async function receiptOf(home: string, res: SbxResult, json: boolean, key: string): Promise<DetailedReceiptDocument> {
  if (json) {
    const doc = JSON.parse(res.stdout) as ReceiptDocument;
    expect(doc.idempotency_key).toBe(key);
  }
  const { result, doc } = await runMainJson<DetailedReceiptDocument>(["receipts", "show", key, "--json"], { home });
  expect(result.code).toBe(0);
  return doc;
}

function checkStderrLine(res: SbxResult, doc: ReceiptDocument, c: Case): void {
  const errLines = lines(res.stderr);
  if (c.classification === "succeeded" || c.classification === "failed") {
    expect(res.stderr).toBe("");
    return;
  }
  expect(errLines, res.stderr).toHaveLength(1);
  const line = errLines[0]!;
  expect(line).toContain(doc.receipt_id);
  if (c.next !== null) expect(line).toContain(`sbx receipts ${c.next} ${doc.receipt_id}`);
  else expect(line).not.toMatch(/sbx receipts (wait|resubmit)/);
  for (const s of c.stderrHas ?? []) expect(line).toContain(s);
  expect(line).not.toMatch(/\x1b\[/);
}

const deadline = useClientDeadlines();

describe.concurrent("sbx exec against a misbehaving server", () => {
  it.for(cases)("$name → $classification, exit $exit", async (c, t) => {
    const { home, server } = await setup(t, c.behaviour());
    const passes = c.deadlineOnceSent === undefined ? null : deadline(c.deadlineOnceSent);
    const running = runMain(
      [
        "exec",
        "--api-url",
        server.url,
        ...(c.json ? ["--json"] : []),
        ...(passes ? ["--client-timeout", `${c.deadlineOnceSent}ms`] : []),
        "--",
        "echo",
        "hi",
      ],
      { home },
    );
    if (passes) {
      await server.waitForRequests(1);
      passes.abort();
    }
    const res = await running;
    expect(res.code, res.stderr).toBe(c.exit);

    // Exactly one POST, carrying the receipt's key and its exact body bytes.
    const posts = server.posts();
    expect(posts).toHaveLength(1);
    const post = posts[0]!;
    const key = post.headers["idempotency-key"];
    expect(typeof key).toBe("string");
    const doc = await receiptOf(home, res, c.json === true, key as string);
    expect(doc.idempotency_key).toBe(key);
    expect(post.path).toBe(doc.request.path);
    expect(sha256(post.body)).toBe(doc.request.body_sha256);
    expect(doc.request.body).toEqual({ command: ["echo", "hi"], stream: false, timeout: 120_000 });

    expect(doc.classification).toBe(c.classification);
    expect(doc.may_have_run).toBe(c.mayHaveRun);
    expect(doc.exit).toBe(c.exit);
    if (c.doc) expect(doc).toMatchObject(c.doc);
    expect(doc.attempts).toHaveLength(1);

    if (c.json) {
      const printed = JSON.parse(res.stdout) as ReceiptDocument;
      expect(printed.classification).toBe(c.classification);
      expect(printed.receipt_id).toBe(doc.receipt_id);
    } else {
      expect(res.stdout).toBe(c.classification === "record_pending" ? "hi\n" : "");
    }
    checkStderrLine(res, doc, c);
  });

  it("succeeded: exit 0, the command's stdout passed through, nothing on stderr", async (t) => {
    const { home, server } = await setup(t, behaviours.succeeded());
    const res = await runMain(["exec", "--api-url", server.url, "--", "echo", "hi"], { home });
    expect(res).toMatchObject({ code: 0, stdout: "hi\n", stderr: "" });
    expect(server.posts()).toHaveLength(1);
    const doc = await receiptOf(home, res, false, server.posts()[0]!.headers["idempotency-key"] as string);
    expect(doc).toMatchObject({ classification: "succeeded", exit: 0, exit_code: 0, may_have_run: true, next: null });
  });

  it("succeeded --json: one JSON document on stdout and nothing on stderr", async (t) => {
    const { home, server } = await setup(t, behaviours.succeeded());
    const res = await runMain(["exec", "--api-url", server.url, "--json", "--", "echo", "hi"], { home });
    expect(res.code).toBe(0);
    expect(res.stderr).toBe("");
    const doc = JSON.parse(res.stdout) as ReceiptDocument;
    expect(doc).toMatchObject({ classification: "succeeded", exit: 0, stdout: "hi\n", next: null });
    expect(doc.idempotency_key).toBe(server.posts()[0]!.headers["idempotency-key"]);
  });

  it("record_pending is never resubmitted: one POST, and the receipt says wait", async (t) => {
    const { home, server } = await setup(t, behaviours.recordPending());
    const res = await runMain(["exec", "--api-url", server.url, "--json", "--", "echo", "hi"], { home });
    expect(res.code).toBe(255);
    const doc = JSON.parse(res.stdout) as ReceiptDocument;
    expect(doc).toMatchObject({ classification: "record_pending", next: `sbx receipts wait ${doc.receipt_id}` });
    // Once sbx has closed its connections, anything it sent has arrived: no stray retry.
    await until(() => server.openConnections() === 0, 10_000, "sbx to close its connections");
    expect(server.posts()).toHaveLength(1);
  });

  it("connection refused: not_started, exit 75, resubmit is the next step", async (t) => {
    const home = makeHome("sbx-e2e-mis-");
    t.onTestFinished(() => removeHome(home));
    const port = await refusedPort();
    const res = await runMain(["exec", "--api-url", `http://127.0.0.1:${port}`, "--", "echo", "hi"], { home });
    expect(res.code, res.stderr).toBe(75);
    expect(res.stdout).toBe("");
    const { doc: list } = await runMainJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home });
    expect(list).toHaveLength(1);
    const doc = list[0]!;
    expect(doc).toMatchObject({
      classification: "not_started",
      may_have_run: false,
      exit: 75,
      error: { code: "ECONNREFUSED" },
      next: `sbx receipts resubmit ${doc.receipt_id}`,
    });
    const errLines = lines(res.stderr);
    expect(errLines).toHaveLength(1);
    expect(errLines[0]).toContain(`sbx receipts resubmit ${doc.receipt_id}`);
    expect(errLines[0]).toContain("nothing ran");
  });
});
