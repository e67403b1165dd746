// End-to-end: streaming, detach, logs and cancel against the embedded backend.

import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { lines, makeHome, removeHome, runSbx, runSbxJson, spawnSbx } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";

describe("streams, logs and cancel on the local backend", () => {
  let home: string;
  const sbx = (args: string[], timeoutMs?: number) => runSbx(args, { home, ...(timeoutMs ? { timeoutMs } : {}) });

  beforeAll(async () => {
    home = makeHome("sbx-e2e-stream-");
    await sbx(["daemon", "start"]);
  });
  afterAll(async () => {
    await stopDaemon(home);
    removeHome(home);
  });

  it("exec --stream shows output as it comes, on the matching streams, and exits like exec", async () => {
    const child = spawnSbx(["exec", "--stream", "--shell", "echo first; sleep 1; echo second; echo oops >&2; exit 5"], {
      home,
    });
    const seen: Array<{ at: number; text: string }> = [];
    const t0 = Date.now();
    child.stdout?.on("data", (c: Buffer) => seen.push({ at: Date.now() - t0, text: c.toString() }));
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(5);
    expect(seen.map((s) => s.text).join("")).toBe("first\nsecond\n");
    // "first" arrived well before the command ended: it was live.
    expect(seen[0]!.text).toBe("first\n");
    expect(seen.at(-1)!.at - seen[0]!.at).toBeGreaterThan(500);
    expect(stderr).toContain("oops\n");
  });

  it("exec --stream --json prints nothing live and keeps the output in the receipt", async () => {
    const { result, doc } = await runSbxJson<ReceiptDocument>(
      ["exec", "--stream", "--json", "--shell", "echo a; echo b >&2"],
      {
        home,
      },
    );
    expect(result.code).toBe(0);
    expect(doc).toMatchObject({ classification: "succeeded", stdout: "a\n", stderr: "b\n" });
  });

  it("--detach returns before the command ends; receipts wait then sees it finish", async () => {
    const t0 = Date.now();
    const r = await sbx(["exec", "--detach", "--shell", "sleep 3; echo done"]);
    expect(r.code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(2500);
    const [receiptId, executionId] = r.stdout.trim().split("\t");
    expect(executionId).toMatch(/^exe_/);
    const shown = await runSbxJson<ReceiptDocument>(["receipts", "show", receiptId!, "--json"], { home });
    // A confirmed start is not in doubt: the backend says where it is.
    expect(shown.doc).toMatchObject({ classification: "running", may_have_run: true, exit: null });
    const recovered = await runSbxJson<{
      resolved: unknown[];
      running: Array<{ receipt_id: string }>;
      in_doubt: unknown[];
    }>(["recover", "--json"], { home });
    expect(recovered.result.code, recovered.result.stderr).toBe(0);
    expect(recovered.doc.running.map((r) => r.receipt_id)).toContain(receiptId);
    expect(recovered.doc.in_doubt).toEqual([]);
    const waited = await sbx(["receipts", "wait", receiptId!]);
    expect(waited).toMatchObject({ code: 0, stdout: "done\n" });
  });

  it("logs replays a finished execution (raw, and as JSON Lines events) and -f follows a running one", async () => {
    const { doc } = await runSbxJson<ReceiptDocument>(
      ["exec", "--stream", "--json", "--shell", "printf 'x\\ny\\n'; echo e >&2"],
      {
        home,
      },
    );
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

    const started = await sbx(["exec", "--detach", "--shell", "echo one; sleep 1; echo two"]);
    const followed = await sbx(["logs", started.stdout.trim().split("\t")[1]!, "-f"]);
    expect(followed).toMatchObject({ code: 0, stdout: "one\ntwo\n" });
  });

  it("logs reads output beyond the event budget from the full output, byte for byte", async () => {
    const script = "head -c 6500000 /dev/zero | tr '\\0' 'z'; seq 1 200000";
    const { doc } = await runSbxJson<ReceiptDocument>(["exec", "--json", "--stream", "--shell", script], {
      home,
      timeoutMs: 60_000,
    });
    expect(doc.classification).toBe("succeeded");
    expect(doc.stdout_truncated).toBe(true);
    const expected = createHash("sha256");
    expected.update(Buffer.alloc(6_500_000, "z"));
    expected.update(`${Array.from({ length: 200_000 }, (_, i) => i + 1).join("\n")}\n`);
    const replay = await runSbx(["logs", doc.execution_id!], { home, timeoutMs: 60_000 });
    expect(createHash("sha256").update(replay.stdout).digest("hex")).toBe(expected.digest("hex"));
  });

  it("cancel of a sleep 60 ends cancelled within seconds, and says so only then", async () => {
    const started = await sbx(["exec", "--detach", "--", "sleep", "60"]);
    const [receiptId, executionId] = started.stdout.trim().split("\t");
    const t0 = Date.now();
    const cancelled = await runSbxJson<{ state: string; outcome: string; cancel: string }>(
      ["cancel", executionId!, "--wait", "--json", "--reason", "test"],
      { home },
    );
    expect(cancelled.doc).toMatchObject({ state: "cancelled", outcome: "cancelled", cancel: "requested" });
    expect(Date.now() - t0).toBeLessThan(10_000);
    const waited = await sbx(["receipts", "wait", receiptId!]);
    expect(waited.code).toBe(130);
    const again = await runSbxJson<{ cancel: string }>(["cancel", executionId!, "--json"], { home });
    expect(again.doc.cancel).toBe("already_terminal");
  });
});
