// kill -9 after the request was sent: the receipt written before dispatch survives,
// holding the key the server received; an explicit resubmit sends the same bytes
// with the same key as attempt 2 of the same receipt.

import { describe, expect, it } from "vitest";
import type { DetailedReceiptDocument } from "../../src/receipts/document.js";
import { collect, makeHome, removeHome, spawnSbx } from "../support/cli.js";
import { runMainJson } from "../support/in-process.js";
import { behaviours, startMisbehavingServer } from "../support/misbehaving-server.js";

describe("sbx killed with SIGKILL after sending", () => {
  it("leaves a dispatched receipt that resubmit completes with the same key and bytes", async (t) => {
    const home = makeHome("sbx-e2e-crash-");
    t.onTestFinished(() => removeHome(home));
    const server = await startMisbehavingServer(behaviours.hang());
    t.onTestFinished(() => server.close());

    const child = spawnSbx(["exec", "--api-url", server.url, "--", "echo", "hi"], { home });
    const exited = collect(child, undefined, "sbx exec (to be killed)");
    await server.waitForRequests(1);
    expect(child.kill("SIGKILL")).toBe(true);
    const killed = await exited;
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.stdout).toBe("");

    const first = server.posts()[0]!;
    const key = first.headers["idempotency-key"] as string;
    expect(key).toMatch(/^[A-Za-z0-9_:.-]{1,255}$/);

    const shown = await runMainJson<DetailedReceiptDocument>(["receipts", "show", key, "--json"], { home });
    expect(shown.result.code).toBe(0);
    const before = shown.doc;
    expect(before).toMatchObject({
      idempotency_key: key,
      classification: "dispatched",
      may_have_run: true,
      exit: null,
      answered_at: null,
      next: `sbx receipts wait ${before.receipt_id}`,
    });
    expect(before.attempts.map((a) => a.attempt)).toEqual([1]);
    expect(before.observations.map((o) => [o.source, o.classification])).toEqual([["dispatch", "dispatched"]]);

    server.setBehaviour(behaviours.succeeded());
    const resub = await runMainJson<DetailedReceiptDocument>(["receipts", "resubmit", before.receipt_id, "--json"], {
      home,
    });
    expect(resub.result.code, resub.result.stderr).toBe(0);
    expect(resub.doc).toMatchObject({
      receipt_id: before.receipt_id,
      classification: "succeeded",
      exit: 0,
      stdout: "hi\n",
    });

    const posts = server.posts();
    expect(posts).toHaveLength(2);
    const second = posts[1]!;
    expect(second.headers["idempotency-key"]).toBe(key);
    expect(second.path).toBe(first.path);
    expect(second.body.equals(first.body)).toBe(true);

    const after = (
      await runMainJson<DetailedReceiptDocument>(["receipts", "show", before.receipt_id, "--json"], { home })
    ).doc;
    expect(after.classification).toBe("succeeded");
    expect(after.attempts.map((a) => [a.attempt, a.body_sha256])).toEqual([
      [1, before.request.body_sha256],
      [2, before.request.body_sha256],
    ]);
    expect(after.observations.map((o) => [o.source, o.attempt, o.classification])).toEqual([
      ["dispatch", 1, "dispatched"],
      ["dispatch", 2, "dispatched"],
      ["answer", 2, "succeeded"],
    ]);
    const list = await runMainJson<unknown[]>(["receipts", "list", "--json"], { home });
    expect(list.doc).toHaveLength(1);
  });
});
