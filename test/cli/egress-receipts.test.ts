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
import { type LocalHome, localHome, startMain } from "../support/in-process.js";
import { until } from "../support/wait.js";
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

  it("sandbox egress -f follows new connections, as lines or JSON Lines, until interrupted", async () => {
    const stop = new AbortController();
    const human = new AbortController();
    const json = startMain(["sandbox", "egress", "shop", "-f", "--json"], { home: local.home, interrupt: stop.signal });
    const words = startMain(["sandbox", "egress", "shop", "-f"], { home: local.home, interrupt: human.signal });
    try {
      // Both said what is kept now (the JSON one as lines of what went before) before anything new.
      await until(() => words.io.stdoutText().includes("sandbox shop: network allow-list"), 30_000, "the first lines");
      const before = json.io.stdoutText().split("\n").filter(Boolean).length;
      const res = await local.sbx([
        "exec",
        "-s",
        "shop",
        "--shell",
        `curl -s -o /dev/null http://follow.test:${port}/; curl -s -o /dev/null http://allowed.test:${port}/`,
      ]);
      expect(res.code, res.stderr).toBe(0);
      const lines = () =>
        json.io
          .stdoutText()
          .split("\n")
          .filter(Boolean)
          .slice(before)
          .map((l) => JSON.parse(l) as { seq: number; host: string; allowed: boolean; ended_at: string | null });
      await until(
        () => lines().some((c) => c.host === "allowed.test" && c.ended_at !== null),
        30_000,
        "the allowed connection's end",
      );
      const seen = lines();
      expect(seen.find((c) => c.host === "follow.test")).toMatchObject({ allowed: false });
      // Each change is a line, in order (one that opened and ended between two asks: once, ended).
      expect(seen.filter((c) => c.host === "allowed.test").at(-1)!.ended_at).not.toBeNull();
      expect(seen.map((c) => c.seq)).toEqual([...seen.map((c) => c.seq)].sort((a, b) => a - b));
      await until(() => /\tDENIED\tfollow\.test:\d+\thttp\t/.test(words.io.stdoutText()), 30_000, "the refusal's line");
    } finally {
      stop.abort();
      human.abort();
    }
    expect((await json.done).code).toBe(0);
    expect((await words.done).code).toBe(0);
  });

  it("a command refused nothing has egress_denied null, and receipts show no such line", async () => {
    const res = await local.sbx(["exec", "-s", "shop", "--json", "--", "curl", "-s", `http://allowed.test:${port}/`]);
    expect(res.code, res.stderr).toBe(0);
    const doc = JSON.parse(res.stdout) as ReceiptDocument;
    expect(doc.egress_denied).toBeNull();
    expect((await local.sbx(["receipts", "show", doc.receipt_id])).stdout).not.toContain("Egress denied");
  });
});
