// Streaming, detach, logs and cancel against the embedded backend, in-process through
// main(). Commands that must still be running when sbx is looked at wait for a file
// the test creates in their workspace: "live" is proven by order, never by a clock.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { lines } from "../support/cli.js";
import { type LocalHome, localHome, startMain } from "../support/in-process.js";
import { until } from "../support/wait.js";

/** A shell snippet that waits until the file NAME exists in the working directory. */
const waitFor = (name: string) => `while [ ! -e ${name} ]; do sleep 0.02; done`;

describe("streams, logs and cancel on the local backend", () => {
  let local: LocalHome;
  let workspace: string;
  const sbx = (args: string[]) => local.sbx(args);
  /** Lets the commands waiting for NAME go on. */
  const release = (name: string) => fs.writeFileSync(path.join(workspace, name), "");

  beforeAll(async () => {
    local = await localHome("sbx-stream-");
    workspace = (await local.json<{ host_workspace: string }>(["sandbox", "show", "default", "--json"])).doc
      .host_workspace;
  });
  afterAll(() => local.close());

  it("exec --stream shows output as it comes, on the matching streams, and exits like exec", async () => {
    const running = startMain(
      ["exec", "--stream", "--shell", `echo first; ${waitFor("go-stream")}; echo second; echo oops >&2; exit 5`],
      { home: local.home },
    );
    // "first" is shown while the command cannot have ended: it waits for go-stream.
    await until(() => running.io.stdoutText() === "first\n", 20_000, "the first line, live");
    release("go-stream");
    const r = await running.done;
    expect(r.code).toBe(5);
    expect(r.stdout).toBe("first\nsecond\n");
    expect(r.stderr).toContain("oops\n");
  });

  it("exec --stream --json prints nothing live and keeps the output in the receipt", async () => {
    const { result, doc } = await local.json<ReceiptDocument>([
      "exec",
      "--stream",
      "--json",
      "--shell",
      "echo a; echo b >&2",
    ]);
    expect(result.code).toBe(0);
    expect(doc).toMatchObject({ classification: "succeeded", stdout: "a\n", stderr: "b\n" });
  });

  it("--detach returns before the command ends; receipts wait then sees it finish", async () => {
    // The command cannot end before go-detach exists, which is created only after --detach returned.
    const r = await sbx(["exec", "--detach", "--shell", `${waitFor("go-detach")}; echo done`]);
    expect(r.code).toBe(0);
    const [receiptId, executionId] = r.stdout.trim().split("\t");
    expect(executionId).toMatch(/^exe_/);
    const shown = await local.json<ReceiptDocument>(["receipts", "show", receiptId!, "--json"]);
    // A confirmed start is not in doubt: the backend says where it is.
    expect(shown.doc).toMatchObject({ classification: "running", may_have_run: true, exit: null });
    const recovered = await local.json<{
      resolved: unknown[];
      running: Array<{ receipt_id: string }>;
      in_doubt: unknown[];
    }>(["recover", "--json"]);
    expect(recovered.result.code, recovered.result.stderr).toBe(0);
    expect(recovered.doc.running.map((r) => r.receipt_id)).toContain(receiptId);
    expect(recovered.doc.in_doubt).toEqual([]);
    release("go-detach");
    const waited = await sbx(["receipts", "wait", receiptId!]);
    expect(waited).toMatchObject({ code: 0, stdout: "done\n" });
  });

  it("logs replays a finished execution (raw, and as JSON Lines events) and -f follows a running one", async () => {
    const { doc } = await local.json<ReceiptDocument>([
      "exec",
      "--stream",
      "--json",
      "--shell",
      "printf 'x\\ny\\n'; echo e >&2",
    ]);
    const replay = await sbx(["logs", doc.execution_id!]);
    expect(replay).toMatchObject({ code: 0, stdout: "x\ny\n", stderr: "e\n" });
    const events = lines((await sbx(["logs", doc.execution_id!, "--json"])).stdout).map((l) => JSON.parse(l));
    expect(events[0]).toMatchObject({ id: 1, type: "started" });
    expect(events.map((e) => e.type)).toContain("output");
    expect(events.slice(-2).map((e) => e.type)).toEqual(["exit", "end"]);
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const after = lines((await sbx(["logs", doc.execution_id!, "--json", "--after", "1"])).stdout).map((l) =>
      JSON.parse(l),
    );
    expect(after[0].id).toBe(2);

    const started = await sbx(["exec", "--detach", "--shell", `echo one; ${waitFor("go-follow")}; echo two`]);
    const following = startMain(["logs", started.stdout.trim().split("\t")[1]!, "-f"], { home: local.home });
    // Following: "one" is shown while the command still waits, "two" once it goes on.
    await until(() => following.io.stdoutText() === "one\n", 20_000, "logs -f to show the first line");
    release("go-follow");
    expect(await following.done).toMatchObject({ code: 0, stdout: "one\ntwo\n" });
  });

  it("logs reads output beyond the event budget from the full output, byte for byte", async () => {
    const script = "head -c 6500000 /dev/zero | tr '\\0' 'z'; seq 1 200000";
    const { doc } = await local.json<ReceiptDocument>(["exec", "--json", "--stream", "--shell", script]);
    expect(doc.classification).toBe("succeeded");
    expect(doc.stdout_truncated).toBe(true);
    const expected = createHash("sha256");
    expected.update(Buffer.alloc(6_500_000, "z"));
    expected.update(`${Array.from({ length: 200_000 }, (_, i) => i + 1).join("\n")}\n`);
    const replay = await sbx(["logs", doc.execution_id!]);
    expect(createHash("sha256").update(replay.stdout).digest("hex")).toBe(expected.digest("hex"));
  });

  it("cancel of a sleep 60 ends it cancelled, and says so only then", async () => {
    const started = await sbx(["exec", "--detach", "--", "sleep", "60"]);
    const [receiptId, executionId] = started.stdout.trim().split("\t");
    const cancelled = await local.json<{ state: string; outcome: string; cancel: string }>([
      "cancel",
      executionId!,
      "--wait",
      "--json",
      "--reason",
      "test",
    ]);
    expect(cancelled.doc).toMatchObject({ state: "cancelled", outcome: "cancelled", cancel: "requested" });
    const waited = await sbx(["receipts", "wait", receiptId!]);
    expect(waited.code).toBe(130);
    const again = await local.json<{ cancel: string }>(["cancel", executionId!, "--json"]);
    expect(again.doc.cancel).toBe("already_terminal");
  });

  it("cancel --wait records what it learned on the receipt", async () => {
    const detached = await sbx(["exec", "--detach", "--", "sleep", "30"]);
    expect(detached.code).toBe(0);
    const [receiptId, executionId] = detached.stdout.trim().split("\t");
    const r = await sbx(["cancel", receiptId!, "--wait"]);
    expect(r).toMatchObject({ code: 0, stdout: `${executionId}\tcancelled\n` });
    // No refresh needed: the receipt already says so.
    const shown = await local.json<ReceiptDocument & { observations: Array<{ source: string }> }>([
      "receipts",
      "show",
      receiptId!,
      "--json",
    ]);
    expect(shown.doc).toMatchObject({ classification: "cancelled", exit: 130 });
    expect(shown.doc.observations.at(-1)?.source).toBe("cancel");
    // Again, on a terminal: it has ended, so nothing is requested and nothing waited for.
    const again = await local.sbx(["cancel", receiptId!, "--wait"], { tty: true });
    expect(again).toMatchObject({ code: 0, stdout: `${executionId}\tcancelled\n` });
    expect(again.stderr).not.toContain("waiting");
  });
});

describe("a running execution whose sandbox is removed", () => {
  let local: LocalHome;
  beforeAll(async () => {
    local = await localHome("sbx-gone-");
  });
  afterAll(() => local.close());

  it("is in doubt once the backend no longer has it: wait says so (255) with no command to retry, recover counts it", async () => {
    expect((await local.sbx(["sandbox", "create", "doomed"])).code).toBe(0);
    const detached = await local.sbx(["exec", "-s", "doomed", "--detach", "--", "sleep", "600"]);
    expect(detached.code, detached.stderr).toBe(0);
    const [receiptId] = detached.stdout.trim().split("\t");
    expect((await local.json<ReceiptDocument>(["receipts", "show", receiptId!, "--json"])).doc.classification).toBe(
      "running",
    );
    expect((await local.sbx(["sandbox", "rm", "doomed", "--force"])).code).toBe(0);

    const waited = await local.sbx(["receipts", "wait", receiptId!, "--timeout", "30s"]);
    expect(waited.code).toBe(255);
    expect(waited.stderr).toContain("no longer has it");
    expect(waited.stderr).not.toContain("receipts wait");
    const shown = await local.json<ReceiptDocument>(["receipts", "show", receiptId!, "--json"]);
    expect(shown.doc).toMatchObject({
      classification: "outcome_unknown",
      error: { code: "record_gone" },
      may_have_run: true,
      next: null,
    });
    const recovered = await local.json<{ in_doubt: Array<{ receipt_id: string }>; running: unknown[] }>([
      "recover",
      "--json",
    ]);
    expect(recovered.result.code).toBe(255);
    expect(recovered.doc.in_doubt.map((r) => r.receipt_id)).toEqual([receiptId]);
    expect(recovered.doc.running).toEqual([]);
  });
});
