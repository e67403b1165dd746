// Every call of `sbx mcp` that changes something leaves a receipt, not only the starts:
// a file written, bytes to a process's stdin, a signal, a stop, a job's cancel, a sandbox
// created or stopped. Each is a receipt of kind `request` written before it is sent (the
// method, path and exact body bytes, the key, the tool and the MCP request id) with the
// backend's answer recorded on it; a refused one says rejected, and its tool error names
// the receipt. Driven by the SDK's Client over stdio spawning bin/sbx mcp.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpSession, mcpOverStdio } from "../support/mcp-client.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { uniqueSleep } from "../support/processes.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

describe("sbx mcp: a receipt for every call that changes something", () => {
  let mcp: McpSession;
  beforeAll(async () => {
    mcp = await mcpOverStdio("sbx-mcp-evidence-", ["--manage-sandboxes"]);
  });
  afterAll(async () => {
    await mcp?.close();
  });
  const call = (name: string, args: Record<string, unknown>): Promise<Json> => mcp.call(name, args);

  async function receipt(id: string): Promise<Json> {
    return (await runMainJson<Json>(["receipts", "show", id, "--json"], { home: mcp.home })).doc;
  }

  /** The one receipt a call wrote, checked to be the tool's request as sent and answered. */
  async function onlyReceipt(result: Json, tool: string, method: string, path: RegExp): Promise<Json> {
    expect(result.isError, `${JSON.stringify(result)}\n${mcp.stderr()}`).toBeFalsy();
    expect(result.structuredContent.receipt_ids).toHaveLength(1);
    const doc = await receipt(result.structuredContent.receipt_ids[0]);
    expect(doc).toMatchObject({ kind: "request", mcp_tool: tool, classification: "succeeded" });
    expect(doc.mcp_request_id).toMatch(/^[0-9]+$/);
    expect(doc.request.method).toBe(method);
    expect(doc.request.path).toMatch(path);
    return doc;
  }

  it("write_file: the PUT with the file's exact bytes", async () => {
    const written = await call("write_file", { path: "notes/a.txt", content: "evidence\n" });
    const doc = await onlyReceipt(written, "write_file", "PUT", /\/files\?path=notes%2Fa\.txt/);
    expect(doc.request.body).toEqual({ base64: Buffer.from("evidence\n").toString("base64") });
    expect(doc.idempotency_key).toMatch(/^mcp-write_file-/);
    // With the agent's own key, retried: the key it gave is the one sent, both times.
    const keyed = { path: "notes/b.txt", content: "once\n", idempotency_key: "evidence-write-b" };
    for (const _ of [1, 2]) {
      const again = await onlyReceipt(await call("write_file", keyed), "write_file", "PUT", /notes%2Fb\.txt/);
      expect(again.idempotency_key).toBe("evidence-write-b");
    }
  });

  it("continue_process: its stdin write and its signal, one receipt each; stop_process: the stop", async () => {
    const sleep = uniqueSleep(120);
    const started = await call("run_process", {
      shell: `read line; echo got $line; exec sleep ${sleep}`,
      stdin_open: true,
      yield_ms: 0,
    });
    const handle = started.structuredContent.handle;
    const wrote = await call("continue_process", { handle, write: "hi\n", yield_ms: 0 });
    const stdin = await onlyReceipt(wrote, "continue_process", "POST", new RegExp(`/processes/${handle}/stdin`));
    expect(stdin.request.body).toEqual({ base64: Buffer.from("hi\n").toString("base64") });

    const signalled = await call("continue_process", { handle, signal: "terminate", yield_ms: 30_000 });
    const signal = await onlyReceipt(signalled, "continue_process", "POST", new RegExp(`/processes/${handle}/signal`));
    expect(signal.request.body).toEqual({ signal: "TERM" });

    // A read alone sends nothing that changes anything: no receipt.
    const read = await call("continue_process", { handle, yield_ms: 0 });
    expect(read.structuredContent.receipt_ids).toEqual([]);

    const stopped = await call("stop_process", { handle, grace_ms: 0 });
    await onlyReceipt(stopped, "stop_process", "DELETE", new RegExp(`/processes/${handle}\\?grace_ms=0`));
  });

  it("cancel: the job's cancel", async () => {
    const submitted = await call("job_submit", {
      request_id: "evidence-cancel",
      jobs: [{ name: "long", argv: ["sleep", uniqueSleep(120)] }],
    });
    const [job] = submitted.structuredContent.jobs;
    const cancelled = await call("cancel", { job_id: job.job_id });
    await onlyReceipt(cancelled, "cancel", "POST", new RegExp(`/jobs/${job.job_id}/cancel`));
  });

  it("sandbox_create and sandbox_stop: each a receipt in the sandbox it names", async () => {
    const made = await call("sandbox_create", { name: "evidence", idempotency_key: "evidence-make" });
    const create = await onlyReceipt(made, "sandbox_create", "POST", /\/sandbox\/create$/);
    expect(create).toMatchObject({ sandbox_id: "evidence", idempotency_key: "evidence-make" });
    expect(create.request.body).toMatchObject({ name: "evidence" });
    const stopped = await call("sandbox_stop", { sandbox: "evidence" });
    await onlyReceipt(stopped, "sandbox_stop", "POST", /\/sandbox\/evidence\/stop$/);
  });

  it("a request the backend refuses: the receipt says rejected, and the tool error names it", async () => {
    const refused = await call("continue_process", { handle: "prc_doesnotexist0000", signal: "kill" });
    expect(refused.isError).toBe(true);
    const id = /receipts of this call: (rcp_\w+)/.exec(refused.content[0].text)?.[1];
    expect(id, refused.content[0].text).toBeDefined();
    const doc = await receipt(id!);
    expect(doc).toMatchObject({ kind: "request", mcp_tool: "continue_process", classification: "rejected" });

    // Not a start: sbx never sends it again by itself, and a refresh reads nothing.
    const again = await runMain(["receipts", "resubmit", id!, "--force"], { home: mcp.home });
    expect(again.code).toBe(125);
    expect(again.stderr).toContain("not a start: sbx does not send it again");
    const shown = await call("receipt_show", { receipt_id: id, refresh: true });
    expect(shown.structuredContent.classification).toBe("rejected");
  });

  it("every one of them is in the chain: receipts verify passes", async () => {
    expect((await runMain(["receipts", "verify"], { home: mcp.home })).code).toBe(0);
  });
});
