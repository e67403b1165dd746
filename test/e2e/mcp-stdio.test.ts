// `sbx mcp` driven by a real MCP client: the SDK's own Client over stdio, spawning
// bin/sbx mcp (the process boundary is the point), against the embedded daemon that
// server starts in a temporary SBX_HOME. What each call did is read back from the
// receipt store with `sbx receipts show`.

import fs from "node:fs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeHome, removeHome } from "../support/cli.js";
import { daemonPids, stopDaemon } from "../support/daemon.js";
import { connectMcp } from "../support/mcp-client.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { processesWithArg, uniqueSleep } from "../support/processes.js";
import { until } from "../support/wait.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Json> {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
}

async function receiptCount(home: string): Promise<number> {
  const { doc } = await runMainJson<Json[]>(["receipts", "list", "--json", "--limit", "1000"], { home });
  return doc.length;
}

describe("sbx mcp over stdio, with the SDK's client", () => {
  let home: string;
  let client: Client;
  let stderr: () => string;
  beforeAll(async () => {
    home = makeHome("sbx-mcp-");
    ({ client, stderr } = await connectMcp(home));
  });
  afterAll(async () => {
    await client?.close();
    await stopDaemon(home);
    removeHome(home);
  });

  it("lists its tools, each with an input and an output schema", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "run_command",
      "run_process",
      "continue_process",
      "stop_process",
      "job_run",
      "job_submit",
      "job_read",
      "await",
      "cancel",
      "read_file",
      "write_file",
      "list_files",
      "receipts_in_doubt",
      "receipt_show",
      "sandbox_list",
    ]);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe("object");
      expect(t.outputSchema?.type).toBe("object");
    }
  });

  it("runs a command to its end: the exit code and output, and a receipt holding the request", async () => {
    const result = await call(client, "run_command", {
      argv: ["sh", "-c", "echo out; echo err >&2; exit 3"],
      env: { GREETING: "hi" },
    });
    expect(result.isError, stderr()).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      status: "exited",
      classification: "failed",
      confirmed: true,
      exit_code: 3,
      stdout: "out\n",
      stderr: "err\n",
      stdout_omitted_bytes: 0,
      may_have_run: true,
      next_tool_call: null,
    });
    expect(result.content[0].text).toContain("exited 3");
    const id = result.structuredContent.receipt_id;
    const { doc } = await runMainJson<Json>(["receipts", "show", id, "--json"], { home });
    expect(doc).toMatchObject({
      kind: "execute",
      classification: "failed",
      exit_code: 3,
      idempotency_key: result.structuredContent.idempotency_key,
      request: {
        method: "POST",
        body: { command: ["sh", "-c", "echo out; echo err >&2; exit 3"], env: { GREETING: "hi" } },
      },
    });
    expect(doc.idempotency_key).toMatch(/^mcp-run_command-/);
    // The tool call it was made for: the tool and the client's request id.
    expect(doc.mcp_tool).toBe("run_command");
    expect(doc.mcp_request_id).toMatch(/^[0-9]+$/);
    const shown = await runMain(["receipts", "show", id], { home });
    expect(shown.stdout).toContain(`run_command (request ${doc.mcp_request_id})`);
    // Hashed into its request entry: the chain verifies with them set.
    expect((await runMain(["receipts", "verify"], { home })).code).toBe(0);
  });

  it("refuses an input that breaks its schema with the schema's complaint, and nothing is sent", async () => {
    const before = await receiptCount(home);
    const result = await call(client, "run_command", { argv: "echo not-a-list" });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/does not match its schema .*argv.*; nothing was run/);
    const both = await call(client, "run_command", { argv: ["true"], shell: "true" });
    expect(both.isError).toBe(true);
    expect(both.content[0].text).toContain("sbx: give argv or shell, not both");
    expect(await receiptCount(home)).toBe(before);
  });

  it("a retry with the same idempotency_key returns the original execution: it ran once", async () => {
    const args = {
      shell: "echo x >> /workspace/counter; wc -l < /workspace/counter",
      idempotency_key: "mcp-test-once",
    };
    const first = await call(client, "run_command", args);
    const again = await call(client, "run_command", args);
    expect(first.structuredContent).toMatchObject({ status: "exited", exit_code: 0, replayed: false });
    expect(again.structuredContent).toMatchObject({
      status: "exited",
      replayed: true,
      execution_id: first.structuredContent.execution_id,
    });
    const count = await call(client, "run_command", { argv: ["cat", "/workspace/counter"] });
    expect(count.structuredContent.stdout).toBe("x\n");
  });

  it("bounds output: the first and last parts, the omitted bytes counted", async () => {
    const big = await connectMcp(home, ["--max-output-bytes", "1000"]);
    try {
      const result = await call(big.client, "run_command", { shell: "head -c 5000 /dev/zero | tr '\\0' a" });
      expect(result.structuredContent.stdout_omitted_bytes).toBe(4000);
      expect(result.structuredContent.stdout).toMatch(/^a{500}\n\[… 4000 bytes omitted …\]\na{500}$/);
      // 50 MiB: the answer keeps its last MiB; the first part is read from the full output.
      const huge = await call(big.client, "run_command", {
        shell: "printf START; head -c 52428800 /dev/zero | tr '\\0' a; printf END",
      });
      expect(huge.structuredContent).toMatchObject({
        status: "exited",
        exit_code: 0,
        output_cut_by_backend: true,
        stdout_omitted_bytes: 52428800 + 8 - 1000,
      });
      expect(huge.structuredContent.stdout).toMatch(/^STARTa{495}\n\[… 52427808 bytes omitted …\]\na{497}END$/);
    } finally {
      await big.client.close();
    }
  });

  it("runs a process: running with a handle, then written to, read by cursor, and ended", async () => {
    const started = await call(client, "run_process", {
      shell: "echo ready; read line; echo got $line",
      stdin_open: true,
      yield_ms: 0,
    });
    expect(started.isError, JSON.stringify(started)).toBeFalsy();
    expect(started.structuredContent).toMatchObject({ status: "running", classification: "succeeded" });
    const handle = started.structuredContent.handle;
    expect(handle).toMatch(/^prc_/);
    // Its first line, read on from the cursor until it is there.
    const ready = await until<Json>(
      async () => {
        const r = await call(client, "continue_process", { handle });
        return r.structuredContent.stdout === "ready\n" ? r : undefined;
      },
      20_000,
      "the process's first line",
    );
    const done = await call(client, "continue_process", {
      handle,
      write: "hello\n",
      stdout_cursor: ready.structuredContent.stdout_cursor,
      yield_ms: 30_000,
    });
    expect(done.structuredContent).toMatchObject({
      status: "exited",
      outcome: "succeeded",
      exit_code: 0,
      stdout: "got hello\n",
      bytes_written: 6,
    });
    const { doc } = await runMainJson<Json>(["receipts", "show", started.structuredContent.receipt_id, "--json"], {
      home,
    });
    expect(doc).toMatchObject({ kind: "process_start", process_id: handle });
  });

  it("stops a process on request", async () => {
    const sleep = uniqueSleep(120);
    const started = await call(client, "run_process", { argv: ["sleep", sleep], yield_ms: 0 });
    const stopped = await call(client, "stop_process", { handle: started.structuredContent.handle, grace_ms: 1000 });
    expect(stopped.structuredContent).toMatchObject({ state: "exited", outcome: "cancelled" });
    expect(processesWithArg(sleep)).toEqual([]);
  });

  it("runs one job to its end, with its output", async () => {
    const result = await call(client, "job_run", { argv: ["sh", "-c", "echo from-job; exit 4"], yield_ms: 60_000 });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      classification: "failed",
      confirmed: true,
      ended: true,
      job: { name: "run", status: "failed", exit_code: 4 },
      stdout: "from-job\n",
    });
    const { doc } = await runMainJson<Json>(["receipts", "show", result.structuredContent.receipt_id, "--json"], {
      home,
    });
    expect(doc).toMatchObject({
      kind: "jobs_run",
      classification: "failed",
      exit_code: 4,
      idempotency_key: result.structuredContent.request_id,
    });
  });

  it("submits a check and a report that depends on it; await past its timeout cancels nothing", async () => {
    const args = {
      request_id: "mcp-pipeline-1",
      jobs: [
        { name: "check", shell: "until [ -f /workspace/check-go ]; do sleep 0.05; done; echo checked" },
        { name: "report", argv: ["echo", "reported"], depends_on: [{ name: "check" }] },
      ],
    };
    const submitted = await call(client, "job_submit", args);
    expect(submitted.isError, JSON.stringify(submitted)).toBeFalsy();
    expect(submitted.structuredContent.jobs.map((j: Json) => j.name)).toEqual(["check", "report"]);
    const ids = submitted.structuredContent.jobs.map((j: Json) => j.job_id);
    // The same request id again admits nothing new.
    const again = await call(client, "job_submit", args);
    expect(again.structuredContent).toMatchObject({ replayed: true });
    expect(again.structuredContent.jobs.map((j: Json) => j.job_id)).toEqual(ids);

    const early = await call(client, "await", { handles: ids, timeout_ms: 300 });
    expect(early.structuredContent.ended).toBe(false);
    expect(early.content[0].text).toContain("nothing was cancelled");
    const [check, report] = early.structuredContent.items;
    expect(["queued", "running"]).toContain(check.status);
    expect(report.status).toBe("waiting");

    await call(client, "run_command", { argv: ["touch", "/workspace/check-go"] });
    const done = await call(client, "await", { handles: ids, timeout_ms: 60_000 });
    expect(done.structuredContent).toMatchObject({
      ended: true,
      items: [
        { kind: "job", status: "succeeded", exit_code: 0 },
        { kind: "job", status: "succeeded", exit_code: 0 },
      ],
    });
    const read = await call(client, "job_read", { job_id: ids[1] });
    expect(read.structuredContent).toMatchObject({ name: "report", status: "succeeded", stdout: "reported\n" });
  });

  it("cancels a job: cancel_requested until its processes are gone, then cancelled", async () => {
    const sleep = uniqueSleep(120);
    const submitted = await call(client, "job_submit", { jobs: [{ name: "long", argv: ["sleep", sleep] }] });
    const id = submitted.structuredContent.jobs[0].job_id;
    await until(() => processesWithArg(sleep).length > 0, 20_000, "the job to run");
    const cancelled = await call(client, "cancel", { job_id: id });
    expect(["cancel_requested", "cancelled"]).toContain(cancelled.structuredContent.status);
    const waited = await call(client, "await", { handles: [id], timeout_ms: 60_000 });
    expect(waited.structuredContent).toMatchObject({ ended: true, items: [{ status: "cancelled" }] });
    expect(processesWithArg(sleep)).toEqual([]);
  });

  it("refuses a job graph the backend would refuse, before anything is sent", async () => {
    const before = await receiptCount(home);
    const result = await call(client, "job_submit", {
      jobs: [{ name: "a", argv: ["true"], depends_on: [{ name: "nosuch" }] }],
    });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/^sbx: .*nosuch/);
    expect(await receiptCount(home)).toBe(before);
  });

  it("a call the client cancels stops waiting, leaves the command running, and its receipt says so", async () => {
    const sleep = uniqueSleep(60);
    const abort = new AbortController();
    const waiting = client
      .callTool(
        { name: "run_command", arguments: { argv: ["sleep", sleep], idempotency_key: "mcp-cancelled" } },
        undefined,
        {
          signal: abort.signal,
          timeout: 120_000,
        },
      )
      .catch((err: Error) => err);
    await until(() => processesWithArg(sleep).length > 0, 20_000, "the command to run");
    abort.abort();
    expect(await waiting).toBeInstanceOf(Error);
    const doc = await until<Json>(
      async () => {
        const shown = await runMainJson<Json>(["receipts", "show", "mcp-cancelled", "--json"], { home });
        return shown.doc.classification === "dispatched" ? undefined : shown.doc;
      },
      20_000,
      "the receipt to record the stopped wait",
    );
    expect(doc).toMatchObject({ classification: "local_timeout", may_have_run: true, error: { code: "interrupted" } });
    // Only the waiting stopped: the command runs on until something ends it.
    expect(processesWithArg(sleep).length).toBeGreaterThan(0);
    for (const pid of processesWithArg(sleep)) process.kill(pid, "SIGKILL");
    await until(() => processesWithArg(sleep).length === 0, 20_000, "the command to end");
  });

  it("a long yield_ms wait sends progress when the client asks; a cancel stops the wait and the process runs on", async () => {
    const go = `/workspace/progress-go-${process.pid}`;
    const notes: { progress: number; total?: number; message?: string }[] = [];
    const waiting = client.callTool(
      {
        name: "run_process",
        arguments: { shell: `until [ -f ${go} ]; do sleep 0.05; done; echo went`, yield_ms: 60_000 },
      },
      undefined,
      { timeout: 120_000, onprogress: (p) => void notes.push(p) },
    );
    await until(() => notes.length >= 2, 30_000, "two progress notifications");
    expect(notes[0]).toMatchObject({ progress: 1, total: 60 });
    expect(notes[1]!.progress).toBeGreaterThan(notes[0]!.progress);
    expect(notes[0]!.message).toContain("run_process: waited 1 s of 60 s");
    await call(client, "run_command", { argv: ["touch", go] });
    const done: Json = await waiting;
    expect(done.structuredContent).toMatchObject({ status: "exited", outcome: "succeeded", stdout: "went\n" });

    // Cancelled while it waits: the wait stops, the process is not touched.
    const sleep = uniqueSleep(120);
    const abort = new AbortController();
    const cancelled = client
      .callTool(
        { name: "run_process", arguments: { argv: ["sleep", sleep], name: `held-${process.pid}`, yield_ms: 60_000 } },
        undefined,
        { signal: abort.signal, timeout: 120_000 },
      )
      .catch((err: Error) => err);
    await until(() => processesWithArg(sleep).length > 0, 20_000, "the process to run");
    abort.abort();
    expect(await cancelled).toBeInstanceOf(Error);
    // The server answers the next call while the process runs on.
    const listed = await call(client, "sandbox_list", {});
    expect(listed.isError).toBeFalsy();
    expect(processesWithArg(sleep).length).toBeGreaterThan(0);
    const { doc } = await runMainJson<Json[]>(["process", "list", "--json"], { home });
    const held = (Array.isArray(doc) ? doc : (doc as Json).processes).find(
      (p: Json) => p.name === `held-${process.pid}`,
    );
    expect(held).toMatchObject({ state: "running" });
    await call(client, "stop_process", { handle: held.process_id, grace_ms: 0 });
  });

  it("writes a file and reads it back, bounded, binary as base64", async () => {
    const written = await call(client, "write_file", {
      path: "hello.txt",
      content: "hello\nworld\n",
      mode: "0600",
    });
    expect(written.isError, JSON.stringify(written)).toBeFalsy();
    expect(written.structuredContent).toMatchObject({ path: "/workspace/hello.txt", bytes: 12 });
    const seen = await call(client, "run_command", { argv: ["stat", "-c", "%a %s", "/workspace/hello.txt"] });
    expect(seen.structuredContent.stdout).toBe("600 12\n");
    const read = await call(client, "read_file", { path: "/workspace/hello.txt" });
    expect(read.structuredContent).toMatchObject({
      content: "hello\nworld\n",
      encoding: "utf8",
      size: 12,
      omitted_bytes: 0,
    });
    await call(client, "write_file", {
      path: "bin.dat",
      content: Buffer.from([0xff, 0, 0xfe]).toString("base64"),
      encoding: "base64",
    });
    const bin = await call(client, "read_file", { path: "bin.dat" });
    expect(bin.structuredContent).toMatchObject({ content: "/wD+", encoding: "base64", size: 3 });
    await call(client, "run_command", { shell: "head -c 200000 /dev/zero | tr '\\0' b > /workspace/big.txt" });
    const big = await call(client, "read_file", { path: "big.txt" });
    expect(big.structuredContent).toMatchObject({ size: 200000, omitted_bytes: 200000 - 65536 });
    expect(big.structuredContent.content).toBe("b".repeat(65536));
    const outside = await call(client, "read_file", { path: "/etc/passwd" });
    expect(outside.isError).toBe(true);
    expect(outside.content[0].text).toMatch(/^sbx: /);
  });

  it("lists files under /workspace, to a depth, bounded", async () => {
    await call(client, "run_command", {
      shell:
        "mkdir -p /workspace/tree/sub/deeper && echo abc > /workspace/tree/a.txt && echo x > /workspace/tree/sub/deeper/b && ln -sf a.txt /workspace/tree/link",
    });
    const one = await call(client, "list_files", { path: "tree" });
    expect(one.isError, JSON.stringify(one)).toBeFalsy();
    expect(one.structuredContent).toMatchObject({
      path: "/workspace/tree",
      truncated: false,
      entries: [
        { path: "a.txt", type: "file", size: 4 },
        { path: "link", type: "symlink", link_target: "a.txt" },
        { path: "sub", type: "directory" },
      ],
    });
    const deep = await call(client, "list_files", { path: "/workspace/tree", depth: 3 });
    expect(deep.structuredContent.entries.map((e: Json) => e.path)).toEqual([
      "a.txt",
      "link",
      "sub",
      "sub/deeper",
      "sub/deeper/b",
    ]);
    const cut = await call(client, "list_files", { path: "tree", depth: 3, max_entries: 2 });
    expect(cut.structuredContent.truncated).toBe(true);
    expect(cut.structuredContent.entries).toHaveLength(2);
    const file = await call(client, "list_files", { path: "tree/a.txt" });
    expect(file.isError).toBe(true);
    expect(file.content[0].text).toContain("not a directory");
    const outside = await call(client, "list_files", { path: "/etc" });
    expect(outside.isError).toBe(true);
  });

  it("lists sandboxes", async () => {
    const result = await call(client, "sandbox_list", {});
    expect(result.structuredContent.sandboxes.map((s: Json) => s.name)).toContain("default");
  });

  it("says a call whose daemon was killed mid-run may have run, and names it in receipts_in_doubt", async () => {
    const sleep = uniqueSleep(60);
    const running = call(client, "run_command", { argv: ["sleep", sleep] });
    await until(() => processesWithArg(sleep).length > 0, 20_000, "the daemon to run the command");
    const [daemon] = daemonPids(home);
    expect(daemon).toBeDefined();
    process.kill(daemon!, "SIGKILL");
    const result = await running;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      status: "outcome_unknown",
      classification: "outcome_unknown",
      may_have_run: true,
      confirmed: false,
    });
    const id = result.structuredContent.receipt_id;
    expect(result.structuredContent.next_tool_call).toContain(`receipt_show {"receipt_id": "${id}", "refresh": true}`);
    expect(result.content[0].text).toContain("may have run");
    const doubt = await call(client, "receipts_in_doubt", {});
    expect(doubt.structuredContent.receipts.map((r: Json) => r.receipt_id)).toContain(id);
    // The read starts the backend again; its recovery says what became of it: still not a success.
    const shown = await call(client, "receipt_show", { receipt_id: id, refresh: true });
    expect(shown.isError, JSON.stringify(shown)).toBeFalsy();
    expect(shown.structuredContent.refreshed).not.toBeNull();
    expect(shown.structuredContent.classification).toBe("outcome_unknown");
    expect(shown.structuredContent.may_have_run).toBe(true);
  });
});

describe("a server killed mid-call, and a second one started", () => {
  it("names the call in receipts_in_doubt; the same call retried with its key does not run twice", async (t) => {
    const home = makeHome("sbx-mcp-kill-");
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    const first = await connectMcp(home);
    const marker = `mcp-held-${process.pid}-${Date.now()}`;
    // Counts its runs, then holds until told to go: the server is killed while it holds.
    const args = {
      shell: `echo run >> /workspace/count; until [ -f /workspace/go ]; do sleep 0.05; done; echo ${marker}`,
      idempotency_key: "mcp-kill-retry",
    };
    const lost = call(first.client, "run_command", args).catch((err: Error) => err);
    await until(() => processesWithArg(args.shell).length > 0, 20_000, "the command to run");
    process.kill(first.pid, "SIGKILL");
    expect(await lost).toBeInstanceOf(Error);

    const second = await connectMcp(home);
    t.onTestFinished(() => second.client.close());
    const doubt = await call(second.client, "receipts_in_doubt", {});
    const named = doubt.structuredContent.receipts.find((r: Json) => r.idempotency_key === "mcp-kill-retry");
    expect(named).toMatchObject({
      classification: "dispatched",
      may_have_run: true,
      kind: "execute",
      mcp_tool: "run_command",
    });
    expect(named.next_tool_call).toContain('"idempotency_key": "mcp-kill-retry"');
    await call(second.client, "run_command", { argv: ["touch", "/workspace/go"] });
    // It ends on its own; reading it (never running it) until the backend says so.
    await until(
      async () => {
        const r = await call(second.client, "receipt_show", { receipt_id: named.receipt_id, refresh: true });
        return r.structuredContent.classification === "succeeded";
      },
      30_000,
      "the held command to end",
    );
    const retried = await call(second.client, "run_command", args);
    expect(retried.structuredContent).toMatchObject({ status: "exited", exit_code: 0, replayed: true });
    expect(retried.structuredContent.stdout).toBe(`${marker}\n`);
    const count = await call(second.client, "run_command", { argv: ["cat", "/workspace/count"] });
    expect(count.structuredContent.stdout).toBe("run\n");
  });
});

describe("a server stopped (SIGTERM) while a call waits", () => {
  it("records that it stopped waiting before it exits: the command may still be running", async (t) => {
    const home = makeHome("sbx-mcp-term-");
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    const server = await connectMcp(home);
    const sleep = uniqueSleep(60);
    const waiting = call(server.client, "run_command", { argv: ["sleep", sleep], idempotency_key: "mcp-term" }).catch(
      (err: Error) => err,
    );
    await until(() => processesWithArg(sleep).length > 0, 20_000, "the command to run");
    process.kill(server.pid, "SIGTERM");
    await waiting;
    await until(() => !fs.existsSync(`/proc/${server.pid}`), 20_000, "the server to exit");
    const { doc } = await runMainJson<Json>(["receipts", "show", "mcp-term", "--json"], { home });
    expect(doc).toMatchObject({ classification: "local_timeout", may_have_run: true, error: { code: "interrupted" } });
  });
});

describe("sbx mcp --manage-sandboxes", () => {
  it("creates a sandbox once per key, runs in it, and stops it; without the option neither tool is offered", async (t) => {
    const home = makeHome("sbx-mcp-manage-");
    const plain = await connectMcp(home);
    const managing = await connectMcp(home, ["--manage-sandboxes"]);
    t.onTestFinished(async () => {
      await plain.client.close();
      await managing.client.close();
      await stopDaemon(home);
      removeHome(home);
    });
    const names = (await plain.client.listTools()).tools.map((x) => x.name);
    expect(names).not.toContain("sandbox_create");
    expect(names).not.toContain("sandbox_stop");
    const refused = await call(plain.client, "sandbox_create", { name: "agent" });
    expect(refused.isError).toBe(true);
    expect((await call(plain.client, "sandbox_list", {})).structuredContent.sandboxes).toEqual([]);

    const args = { name: "agent", idempotency_key: "mcp-create-agent" };
    const made = await call(managing.client, "sandbox_create", args);
    expect(made.isError, JSON.stringify(made)).toBeFalsy();
    expect(made.structuredContent).toMatchObject({ name: "agent", replayed: false });
    const again = await call(managing.client, "sandbox_create", args);
    expect(again.structuredContent).toMatchObject({ sandbox_id: made.structuredContent.sandbox_id, replayed: true });
    const sleep = uniqueSleep(120);
    const started = await call(managing.client, "run_process", {
      sandbox: "agent",
      argv: ["sleep", sleep],
      yield_ms: 0,
    });
    expect(started.structuredContent.status).toBe("running");
    const stopped = await call(managing.client, "sandbox_stop", { sandbox: "agent" });
    expect(stopped.isError, JSON.stringify(stopped)).toBeFalsy();
    expect(stopped.structuredContent).toMatchObject({ name: "agent", was_running: true, ended: { processes: 1 } });
    expect(processesWithArg(sleep)).toEqual([]);
  });
});

describe("sbx mcp --tools", () => {
  it("read-only offers only the tools that change nothing, and refuses the others", async (t) => {
    const home = makeHome("sbx-mcp-ro-");
    const { client } = await connectMcp(home, ["--tools", "read-only"]);
    t.onTestFinished(async () => {
      await client.close();
      await stopDaemon(home);
      removeHome(home);
    });
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual([
      "job_read",
      "await",
      "read_file",
      "list_files",
      "receipts_in_doubt",
      "receipt_show",
      "sandbox_list",
    ]);
    const refused = await call(client, "run_command", { argv: ["true"] });
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toContain('sbx: no tool "run_command" here');
    expect(await receiptCount(home)).toBe(0);
  });
});
