// Egress flags as a user meets them (docs/network.md): sandbox create --allow-domain,
// --allow-cidr, --egress-policy FILE; sandbox show says the mode and the policy;
// sandbox update adds and denies at once; what is not a policy is refused, nothing made.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";

describeNeeding(["bwrap"], "sbx sandbox create/update/show with an egress policy", () => {
  let local: LocalHome;
  beforeAll(async () => {
    local = await localHome("sbx-egress-");
  });
  afterAll(async () => {
    await local.close();
  });

  it("creates an allow-list sandbox from flags and a file, shows it, and updates it", async () => {
    const file = path.join(local.home, "policy.json");
    fs.writeFileSync(file, JSON.stringify({ allow_domains: ["files.example"], allow_cidrs: ["203.0.113.0/24"] }));
    const made = await local.sbx([
      "sandbox",
      "create",
      "ci",
      "--allow-domain",
      "PyPI.org",
      "--allow-domain",
      "*.pythonhosted.org",
      "--egress-policy",
      file,
      "--json",
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({
      network_mode: "allow-list",
      egress: {
        allow_domains: ["files.example", "pypi.org", "*.pythonhosted.org"],
        deny_domains: [],
        allow_cidrs: ["203.0.113.0/24"],
      },
    });
    const shown = await local.sbx(["sandbox", "show", "ci"]);
    expect(shown.stdout).toMatch(/^network\tallow-list \(no route out; only what its egress policy allows/m);
    expect(shown.stdout).toMatch(/^allow_domains\tfiles\.example pypi\.org \*\.pythonhosted\.org$/m);
    expect(shown.stdout).toMatch(/^deny_domains\t\(none\)$/m);
    expect(shown.stdout).toMatch(/^allow_cidrs\t203\.0\.113\.0\/24$/m);

    const updated = await local.sbx([
      "sandbox",
      "update",
      "ci",
      "--allow-domain",
      "github.com",
      "--deny-domain",
      "pypi.org",
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(/^allow_domains\tfiles\.example \*\.pythonhosted\.org github\.com$/m);
    expect(updated.stdout).toMatch(/^deny_domains\tpypi\.org$/m);
    const json = JSON.parse((await local.sbx(["sandbox", "show", "ci", "--json"])).stdout);
    expect(json.egress.deny_domains).toEqual(["pypi.org"]);
    // Nothing ran yet: its egress report says so.
    const egress = await local.sbx(["sandbox", "egress", "ci"]);
    expect(egress.stdout).toBe(
      "sandbox ci: network allow-list; 0 allowed, 0 refused since the daemon started\n(no connections yet)\n",
    );
  });

  it("refuses what is not a policy, saying why; nothing created or changed", async () => {
    const bad = await local.sbx(["sandbox", "create", "bad", "--allow-domain", "https://pypi.org"]);
    expect(bad.code).toBe(125);
    expect(bad.stderr).toContain('"https://pypi.org" is not a domain name');
    expect((await local.sbx(["sandbox", "show", "bad"])).code).toBe(125);
    const missing = await local.sbx(["sandbox", "create", "bad", "--egress-policy", "/nonexistent/policy.json"]);
    expect(missing.code).toBe(125);
    expect(missing.stderr).toContain("--egress-policy /nonexistent/policy.json: no such file");
    await local.sbx(["sandbox", "create", "plain"]);
    expect((await local.sbx(["sandbox", "egress", "plain"])).stdout).toContain(
      "(no egress proxy: its network is not an allow-list)",
    );
    const notAllowList = await local.sbx(["sandbox", "update", "plain", "--allow-domain", "pypi.org"]);
    expect(notAllowList.code).toBe(125);
    expect(notAllowList.stderr).toContain("an egress policy is for network allow-list");
  });
});
