// The validating run can fail: an answer off the document — here a deliberately wrong
// one, the daemon's `drop_field` fault leaving out a required field — is caught, and
// so are the other kinds of drift it exists for (an undocumented field, status or
// error code, a request the document refuses that was accepted, a bad event).

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WireExchange } from "../../src/backend/http/wire-record.js";
import { REPO_ROOT } from "../support/cli.js";
import { readExchanges, validateTraffic } from "../support/wire-validator.js";
import { EXECUTE, startTestBackend, type TestBackend, tempDir } from "../backend/support.js";

const document = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "docs", "openapi.json"), "utf8"));

describe("the validating run", () => {
  let dir: string;
  let b: TestBackend;
  let good: WireExchange[];
  let bad: WireExchange[];

  beforeAll(async () => {
    dir = tempDir("sbx-contract-");
    // One backend answers executions.get whole, the other without its `outcome`.
    for (const [name, faults] of [
      ["good", ""],
      ["bad", "executions.get:drop_field=outcome"],
    ] as const) {
      b = await startTestBackend({ faults, wireRecord: path.join(dir, name) }, tempDir());
      const started = await b.api("POST", EXECUTE, { body: { command: ["sh", "-c", "echo hi"] } });
      expect(started.status).toBe(200);
      await b.api("GET", `/api/v1/sandbox/default/executions/${started.json.execution_id}`);
      await b.api("POST", EXECUTE, { body: { command: ["echo", "streamed"], stream: true } });
      await b.stop();
    }
    good = readExchanges(path.join(dir, "good"));
    bad = readExchanges(path.join(dir, "bad"));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("passes the traffic of a backend that keeps the contract", async () => {
    const report = await validateTraffic(document, good);
    expect(report.violations).toEqual([]);
    expect([...report.pairs.keys()].sort()).toEqual(["execute 200", "executions.get 200"]);
  });

  it("fails on an answer that lacks a required field (the drop_field fault)", async () => {
    const report = await validateTraffic(document, bad);
    expect(report.violations).toEqual([
      expect.stringMatching(
        /^GET \/api\/v1\/sandbox\/default\/executions\/exe_\S+ → 200: body: .*"missingProperty":"outcome"/,
      ),
    ]);
  });

  /** The good traffic with one exchange changed. */
  async function violationsOf(change: (exchanges: WireExchange[]) => void): Promise<string[]> {
    const copy = structuredClone(good);
    change(copy);
    return (await validateTraffic(document, copy)).violations;
  }

  const record = (exchanges: WireExchange[]) => exchanges.find((e) => e.target.includes("/executions/"))!;
  const stream = (exchanges: WireExchange[]) =>
    exchanges.find((e) => e.responseHeaders["content-type"]?.startsWith("text/event-stream"))!;

  it("fails on a field the document does not describe", async () => {
    const found = await violationsOf((all) => {
      const ex = record(all);
      ex.responseBody = JSON.stringify({ ...JSON.parse(ex.responseBody!), surprise: 1 });
    });
    expect(found).toEqual([expect.stringMatching(/body: .*"additionalProperty":"surprise"/)]);
  });

  it("fails on a status or an error code the route does not document", async () => {
    const found = await violationsOf((all) => {
      const ex = record(all);
      ex.status = 409;
      ex.responseBody = JSON.stringify({ error: { code: "stdin_busy", message: "no", details: {} } });
      const other = all.find((e) => e.method === "POST")!;
      other.status = 418;
    });
    expect(found).toEqual([
      expect.stringMatching(/→ 418: status 418 is not documented for execute/),
      expect.stringMatching(/→ 409: status 409 is not documented for executions.get/),
    ]);
  });

  it("fails on a request the document refuses that was answered 2xx", async () => {
    const found = await violationsOf((all) => {
      const ex = all.find((e) => e.method === "POST")!;
      ex.requestBody = JSON.stringify({ command: ["true"], timeout: 5 });
    });
    expect(found).toEqual([
      expect.stringMatching(/the document refuses the request, but it was answered 200: .*timeout/),
    ]);
  });

  it("fails on an event whose data is not its type's", async () => {
    const found = await violationsOf((all) => {
      const ex = stream(all);
      ex.responseBody = ex.responseBody!.replace(/"stream":"stdout"/, '"stream":"stdlog"');
    });
    expect(found).toEqual([expect.stringMatching(/event output \d+: .*stream/)]);
  });
});
