// The administrative side the issues name, in-process through main(): prune keeps
// what is in doubt, export --since filters, --env-file reaches the request, profiles
// switch backends and take their keys with them when removed. (A daemon on TCP
// requiring its token: test/e2e/daemon-tcp.)

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import type { DetailedReceiptDocument, ReceiptDocument } from "../../src/receipts/document.js";
import { lines, makeHome, removeHome } from "../support/cli.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { behaviours, startMisbehavingServer } from "../support/misbehaving-server.js";

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
    const ok = await runMainJson<ReceiptDocument>(["exec", "--json", "--api-url", server.url, "--", "echo", "hi"], {
      home,
    });
    server.setBehaviour({ kind: "raw", status: 502, contentType: "text/html", body: "<h1>Bad Gateway</h1>" });
    const doubt = await runMainJson<ReceiptDocument>(["exec", "--json", "--api-url", server.url, "--", "true"], {
      home,
    });
    expect([ok.doc.classification, doubt.doc.classification]).toEqual(["succeeded", "outcome_unknown"]);

    const pruned = await runMainJson<{ deleted: number }>(["receipts", "prune", "--before", future(), "--json"], {
      home,
    });
    expect(pruned.doc.deleted).toBe(1);
    const left = await runMainJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home });
    expect(left.doc.map((d) => d.receipt_id)).toEqual([doubt.doc.receipt_id]);

    await runMain(["receipts", "prune", "--before", future(), "--include-in-doubt"], { home });
    expect((await runMainJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home })).doc).toEqual([]);
  });

  it("export prints JSON Lines oldest first, and --since leaves older receipts out", async (t) => {
    const { home, server } = await setup(t);
    const first = await runMainJson<ReceiptDocument>(["exec", "--json", "--api-url", server.url, "--", "echo", "1"], {
      home,
    });
    const second = await runMainJson<ReceiptDocument>(["exec", "--json", "--api-url", server.url, "--", "echo", "2"], {
      home,
    });
    const all = lines((await runMain(["receipts", "export"], { home })).stdout).map(
      (l) => JSON.parse(l) as DetailedReceiptDocument,
    );
    expect(all.map((d) => d.receipt_id)).toEqual([first.doc.receipt_id, second.doc.receipt_id]);
    expect(all[0]!.attempts).toHaveLength(1);
    expect(all[0]!.observations.length).toBeGreaterThanOrEqual(2);
    const since = await runMain(["receipts", "export", "--since", second.doc.created_at], { home });
    expect(lines(since.stdout).map((l) => JSON.parse(l).receipt_id)).toEqual([second.doc.receipt_id]);
    expect((await runMain(["receipts", "export", "--since", future()], { home })).stdout).toBe("");
  });

  it("--env-file reaches the request, with --env entries over it", async (t) => {
    const { home, server } = await setup(t);
    const file = path.join(home, "vars.env");
    fs.writeFileSync(file, "# comment\nA=from-file\nexport B='two words'\n");
    const r = await runMain(
      ["exec", "--api-url", server.url, "--env-file", file, "--env", "A=from-flag", "--", "env"],
      {
        home,
      },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(server.posts()[0]!.body.toString()).env).toEqual({ A: "from-flag", B: "two words" });
  });

  it("profile use switches the backend; profile rm forgets the profile and its key", async (t) => {
    const { home, server } = await setup(t);
    const added = await runMain(["profile", "add", "team", "--api-url", server.url, "--api-key-stdin", "--use"], {
      home,
      input: "team-key-123",
    });
    expect(added.code).toBe(0);
    expect((await runMain(["exec", "--", "echo", "hi"], { home })).code).toBe(0);
    expect(server.posts()[0]!.headers.authorization).toBe("ApiKey team-key-123");

    expect((await runMain(["profile", "rm", "team"], { home })).code).toBe(0);
    const profiles = await runMainJson<{ profiles: Array<{ profile: string; current: boolean }> }>(
      ["profile", "list", "--json"],
      { home },
    );
    expect(profiles.doc.profiles).toEqual([expect.objectContaining({ profile: "local", current: true })]);
    expect(fs.readFileSync(path.join(home, "credentials.json"), "utf8")).not.toContain("team-key-123");
    expect((await runMain(["profile", "use", "team"], { home })).code).not.toBe(0);
  });
});
