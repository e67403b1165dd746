// Egress denials on the receipt as a user meets them (docs/network.md, "Evidence"): a
// command whose connections the sandbox's egress policy refused has them on its receipt
// (exec --json, receipts show and its --json), in the signed bundle, and the chain still
// verifies. The destination is a server on 127.0.0.2, named through the proxy's resolver.

import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { mapResolver } from "../../src/backend/egress/index.js";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";

const SERVER_IP = "127.0.0.2";

describeNeeding(["bwrap", "tools"], "egress denials on receipts", () => {
  let local: LocalHome;
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end("hello\n"));
    await new Promise<void>((resolve) => server.listen(0, SERVER_IP, () => resolve()));
    port = (server.address() as { port: number }).port;
    const hosts = new Map([
      ["allowed.test", [SERVER_IP]],
      ["denied.test", [SERVER_IP]],
    ]);
    local = await localHome("sbx-egress-rcpt-", { drivers: { egress: { resolve: mapResolver(hosts) } } });
    const made = await local.sbx([
      "sandbox",
      "create",
      "shop",
      "--allow-domain",
      "allowed.test",
      "--allow-cidr",
      `${SERVER_IP}/32`,
    ]);
    expect(made.code, made.stderr).toBe(0);
  });
  afterAll(async () => {
    await local.close();
    await new Promise((done) => server.close(done));
  });

  it("puts the refused connections on the receipt, receipts show, the bundle; the chain verifies", async () => {
    const res = await local.sbx([
      "exec",
      "-s",
      "shop",
      "--json",
      "--shell",
      `curl -s -o /dev/null https://denied.test:${port}/; curl -s http://allowed.test:${port}/`,
    ]);
    expect(res.code, res.stderr).toBe(0);
    const doc = JSON.parse(res.stdout) as ReceiptDocument;
    const reason = "denied.test is not on the sandbox's allow-list";
    expect(doc.egress_denied).toEqual({
      total: 1,
      first: [{ at: expect.any(String), host: "denied.test", port, protocol: "connect", reason }],
    });
    const shown = await local.json<ReceiptDocument>(["receipts", "show", doc.receipt_id, "--json"]);
    expect(shown.doc.egress_denied).toEqual(doc.egress_denied);
    const words = await local.sbx(["receipts", "show", doc.receipt_id]);
    expect(words.stdout).toMatch(/Egress denied\s+1 connection refused by the sandbox's egress policy\n/);
    expect(words.stdout).toContain(`denied.test:${port} (connect): ${reason}`);
    // The signed bundle holds it as stored, and verifies.
    const file = path.join(local.home, "egress.sbx");
    const made = await local.sbx(["receipts", "export", "--bundle", file]);
    expect(made.code, made.stderr).toBe(0);
    const bundled = fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.includes('"type":"receipt"'))
      .map((l) => JSON.parse(l) as { receipt: { receipt_id: string }; observations: Array<{ egress_denied: unknown }> })
      .find((l) => l.receipt.receipt_id === doc.receipt_id)!;
    const carried = bundled.observations.filter((o) => o.egress_denied !== null);
    expect(carried.length).toBeGreaterThan(0);
    expect(JSON.parse(carried.at(-1)!.egress_denied as string)).toEqual(doc.egress_denied);
    const verified = await local.sbx(["receipts", "verify"]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it("says each refusal on stderr (exec: at its end, or as it happens with --stream) and in sbx logs, plain, --json and -f", async () => {
    const notice = `sbx: egress denied: denied.test:${port} (http): denied.test is not on the sandbox's allow-list`;
    const res = await local.sbx([
      "exec",
      "-s",
      "shop",
      "--",
      "curl",
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}\\n",
      `http://denied.test:${port}/`,
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe("403\n");
    expect(res.stderr).toContain(notice);
    const executionId = (await local.json<ReceiptDocument[]>(["receipts", "list", "--json", "--limit", "1"])).doc[0]!
      .execution_id!;
    // Followed live (--stream): said as it happens, once.
    const streamed = await local.sbx([
      "exec",
      "-s",
      "shop",
      "--stream",
      "--",
      "curl",
      "-s",
      "-o",
      "/dev/null",
      `http://denied.test:${port}/`,
    ]);
    expect(streamed.stderr.split(notice).length - 1, streamed.stderr).toBe(1);
    // Its stdout only, no stderr: sbx logs still replays the event log, refusals included.
    const logs = await local.sbx(["logs", "-s", "shop", executionId]);
    expect(logs.stdout).toBe("403\n");
    expect(logs.stderr).toContain(notice);
    const followed = await local.sbx(["logs", "-s", "shop", "-f", executionId]);
    expect(followed.stderr).toContain(notice);
    const events = (await local.sbx(["logs", "-s", "shop", "--json", executionId])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: number; type: string; data: Record<string, unknown> });
    const denied = events.find((e) => e.type === "egress_denied")!;
    expect(denied.data).toMatchObject({ host: "denied.test", port, protocol: "http", total: 1 });
    // Resumable by id like any event: after it, it is not said again.
    const resumed = await local.sbx(["logs", "-s", "shop", "--after", String(denied.id), executionId]);
    expect(resumed.stderr).not.toContain("egress denied");
  });

  it("a command refused nothing has egress_denied null, and receipts show no such line", async () => {
    const res = await local.sbx(["exec", "-s", "shop", "--json", "--", "curl", "-s", `http://allowed.test:${port}/`]);
    expect(res.code, res.stderr).toBe(0);
    const doc = JSON.parse(res.stdout) as ReceiptDocument;
    expect(doc.egress_denied).toBeNull();
    expect((await local.sbx(["receipts", "show", doc.receipt_id])).stdout).not.toContain("Egress denied");
  });
});
