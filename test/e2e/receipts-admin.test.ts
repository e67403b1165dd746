// The administrative side the issues name: prune keeps what is in doubt, export
// --since filters, --env-file reaches the request, profiles switch backends and take
// their keys with them when removed, and a daemon on TCP requires its token.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import type { DetailedReceiptDocument, ReceiptDocument } from "../../src/receipts/document.js";
import { lines, makeHome, removeHome, runSbx, runSbxJson } from "../support/cli.js";
import { startForegroundDaemon, stopForegroundDaemon } from "../support/daemon.js";
import { behaviours, refusedPort, startMisbehavingServer } from "../support/misbehaving-server.js";

async function setup(t: TestContext) {
  const home = makeHome("sbx-e2e-admin-");
  t.onTestFinished(() => removeHome(home));
  const server = await startMisbehavingServer(behaviours.succeeded());
  t.onTestFinished(() => server.close());
  return { home, server };
}

const future = () => new Date(Date.now() + 60_000).toISOString();

describe.concurrent("receipts and profiles administration", () => {
  it("prune deletes old receipts but keeps those in doubt unless --include-in-doubt", async (t) => {
    const { home, server } = await setup(t);
    const ok = await runSbxJson<ReceiptDocument>(["exec", "--json", "--api-url", server.url, "--", "echo", "hi"], {
      home,
    });
    server.setBehaviour({ kind: "raw", status: 502, contentType: "text/html", body: "<h1>Bad Gateway</h1>" });
    const doubt = await runSbxJson<ReceiptDocument>(["exec", "--json", "--api-url", server.url, "--", "true"], {
      home,
    });
    expect([ok.doc.classification, doubt.doc.classification]).toEqual(["succeeded", "outcome_unknown"]);

    const pruned = await runSbxJson<{ deleted: number }>(["receipts", "prune", "--before", future(), "--json"], {
      home,
    });
    expect(pruned.doc.deleted).toBe(1);
    const left = await runSbxJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home });
    expect(left.doc.map((d) => d.receipt_id)).toEqual([doubt.doc.receipt_id]);

    await runSbx(["receipts", "prune", "--before", future(), "--include-in-doubt"], { home });
    expect((await runSbxJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home })).doc).toEqual([]);
  });

  it("export prints JSON Lines oldest first, and --since leaves older receipts out", async (t) => {
    const { home, server } = await setup(t);
    const first = await runSbxJson<ReceiptDocument>(["exec", "--json", "--api-url", server.url, "--", "echo", "1"], {
      home,
    });
    const second = await runSbxJson<ReceiptDocument>(["exec", "--json", "--api-url", server.url, "--", "echo", "2"], {
      home,
    });
    const all = lines((await runSbx(["receipts", "export"], { home })).stdout).map(
      (l) => JSON.parse(l) as DetailedReceiptDocument,
    );
    expect(all.map((d) => d.receipt_id)).toEqual([first.doc.receipt_id, second.doc.receipt_id]);
    expect(all[0]!.attempts).toHaveLength(1);
    expect(all[0]!.observations.length).toBeGreaterThanOrEqual(2);
    const since = await runSbx(["receipts", "export", "--since", second.doc.created_at], { home });
    expect(lines(since.stdout).map((l) => JSON.parse(l).receipt_id)).toEqual([second.doc.receipt_id]);
    expect((await runSbx(["receipts", "export", "--since", future()], { home })).stdout).toBe("");
  });

  it("--env-file reaches the request, with --env entries over it", async (t) => {
    const { home, server } = await setup(t);
    const file = path.join(home, "vars.env");
    fs.writeFileSync(file, "# comment\nA=from-file\nexport B='two words'\n");
    const r = await runSbx(["exec", "--api-url", server.url, "--env-file", file, "--env", "A=from-flag", "--", "env"], {
      home,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(server.posts()[0]!.body.toString()).env).toEqual({ A: "from-flag", B: "two words" });
  });

  it("profile use switches the backend; profile rm forgets the profile and its key", async (t) => {
    const { home, server } = await setup(t);
    const added = await runSbx(["profile", "add", "team", "--api-url", server.url, "--api-key-stdin", "--use"], {
      home,
      input: "team-key-123",
    });
    expect(added.code).toBe(0);
    expect((await runSbx(["exec", "--", "echo", "hi"], { home })).code).toBe(0);
    expect(server.posts()[0]!.headers.authorization).toBe("ApiKey team-key-123");

    expect((await runSbx(["profile", "rm", "team"], { home })).code).toBe(0);
    const profiles = await runSbxJson<{ profiles: Array<{ profile: string; current: boolean }> }>(
      ["profile", "list", "--json"],
      { home },
    );
    expect(profiles.doc.profiles).toEqual([expect.objectContaining({ profile: "local", current: true })]);
    expect(fs.readFileSync(path.join(home, "credentials.json"), "utf8")).not.toContain("team-key-123");
    expect((await runSbx(["profile", "use", "team"], { home })).code).not.toBe(0);
  });
});

describe("a daemon listening on TCP", () => {
  it("requires its token: refused (125) without it, runs with it", async () => {
    const home = makeHome("sbx-e2e-tcp-");
    const port = await refusedPort();
    const daemon = await startForegroundDaemon(home, ["--listen", `127.0.0.1:${port}`]);
    try {
      const url = `http://127.0.0.1:${port}`;
      const without = await runSbx(["exec", "--api-url", url, "--", "echo", "hi"], { home });
      expect(without.code).toBe(125);
      expect(without.stderr).toContain("unauthorized");
      const token = fs.readFileSync(path.join(home, "daemon", "token"), "utf8").trim();
      const withToken = await runSbx(["exec", "--api-url", url, "--", "echo", "hi"], {
        home,
        env: { SBX_API_KEY: token },
      });
      expect(withToken).toMatchObject({ code: 0, stdout: "hi\n" });
      expect(fs.statSync(path.join(home, "daemon", "token")).mode & 0o777).toBe(0o600);
    } finally {
      await stopForegroundDaemon(daemon);
      removeHome(home);
    }
  });
});
