// When the sandbox cannot be set up, sbx says so and exits 125 (never 1–123: no command
// ran), and the receipt says so: `rejected`, error sandbox_start_failed (docs/classification.md).

import { afterAll, beforeAll, expect, it } from "vitest";
import { brokenEtc } from "../support/broken-sandbox.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";

describeNeeding("bwrap", "sbx when the sandbox cannot be set up", () => {
  let local: LocalHome;
  const etc = brokenEtc();
  beforeAll(async () => {
    local = await localHome("sbx-start-failure-", { drivers: { bwrap: { etcDir: etc.etcDir } } });
    expect((await local.sbx(["exec", "--", "true"])).code).toBe(0);
    etc.breakIt();
    // Its environment, set up before, is stopped: the next command must set it up again.
    expect((await local.sbx(["sandbox", "stop", "default"])).code).toBe(0);
  });
  afterAll(async () => {
    await local.close();
  });

  it("exec: 125, says why without a host path, and the receipt is rejected/sandbox_start_failed", async () => {
    const res = await local.sbx(["exec", "--", "sh", "-c", "echo ran"]);
    expect(res.code).toBe(125);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(/sandbox could not be set up/);
    expect(res.stderr).not.toContain(etc.etcDir);
    const [receipt] = (await local.json<Array<Record<string, unknown>>>(["receipts", "list", "--json", "--limit", "1"]))
      .doc;
    expect(receipt).toMatchObject({ classification: "rejected" });
    expect(JSON.stringify(receipt)).toContain("sandbox_start_failed");
  });

  it("exec --stream: 125 as well", async () => {
    const res = await local.sbx(["exec", "--stream", "--", "sh", "-c", "echo ran"]);
    expect(res.code).toBe(125);
    expect(res.stdout).toBe("");
  });

  it("process start and jobs run: 125", async () => {
    expect((await local.sbx(["process", "start", "--", "sleep", "30"])).code).toBe(125);
    expect((await local.sbx(["jobs", "run", "--", "true"])).code).toBe(125);
  });
});
