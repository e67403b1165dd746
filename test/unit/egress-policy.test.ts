// The egress policy's decisions (src/backend/egress/policy.ts, docs/network.md): pure, table-tested.

import { describe, expect, it } from "vitest";
import {
  decideAddress,
  decideName,
  type EgressPolicy,
  parseAuthority,
  parseHosts,
  policyProblem,
} from "../../src/backend/egress/index.js";

const policy: EgressPolicy = {
  allow_domains: ["pypi.org", "*.pythonhosted.org"],
  deny_domains: ["bad.pythonhosted.org"],
  allow_cidrs: ["192.168.7.0/24", "fd00::/8"],
};

describe("decideName", () => {
  it.each([
    ["pypi.org", true],
    ["PyPI.org.", true],
    ["files.pythonhosted.org", true],
    ["a.b.pythonhosted.org", true],
    ["pythonhosted.org", false],
    ["evilpythonhosted.org", false],
    ["bad.pythonhosted.org", false],
    ["pypi.org.evil.com", false],
    ["example.com", false],
  ])("%s → %s", (host, allowed) => {
    expect(decideName(policy, host).allowed).toBe(allowed);
  });
});

describe("decideAddress", () => {
  it.each([
    // IP literals: only inside an allowed CIDR.
    ["192.168.7.9", null, true],
    ["8.8.8.8", null, false],
    ["127.0.0.1", null, false],
    ["fd00::5", null, true],
    // What an allowed name resolved to: public, or inside an allowed CIDR.
    ["151.101.0.223", "pypi.org", true],
    ["2a04:4e42::223", "pypi.org", true],
    ["127.0.0.1", "pypi.org", false],
    ["::ffff:127.0.0.1", "pypi.org", false],
    ["10.0.0.1", "pypi.org", false],
    ["172.16.3.4", "pypi.org", false],
    ["169.254.169.254", "pypi.org", false],
    ["fe80::1", "pypi.org", false],
    ["0.0.0.0", "pypi.org", false],
    ["192.168.7.200", "pypi.org", true],
  ])("%s (by name %s) → %s", (address, byName, allowed) => {
    expect(decideAddress(policy, address, byName).allowed).toBe(allowed);
  });

  it("says why a rebinding is refused", () => {
    expect(decideAddress(policy, "127.0.0.1", "pypi.org")).toEqual({
      allowed: false,
      reason: "pypi.org resolves to 127.0.0.1, a loopback address, which is not in an allowed CIDR",
    });
  });
});

describe("policyProblem", () => {
  it.each([
    [{ allow_domains: ["https://pypi.org"] }, "allow_domains"],
    [{ allow_domains: ["10.0.0.1"] }, "allow_domains"],
    [{ deny_domains: ["*"] }, "deny_domains"],
    [{ allow_cidrs: ["10.0.0.0/33"] }, "allow_cidrs"],
    [{ allow_cidrs: ["pypi.org"] }, "allow_cidrs"],
  ])("%j is refused in %s", (part, field) => {
    expect(policyProblem({ allow_domains: [], deny_domains: [], allow_cidrs: [], ...part })?.field).toBe(field);
  });
  it("takes a well-formed policy", () => {
    expect(policyProblem(policy)).toBeNull();
  });
});

it("parses CONNECT targets and hosts files", () => {
  expect(parseAuthority("pypi.org:443")).toEqual({ host: "pypi.org", port: 443 });
  expect(parseAuthority("[2001:db8::1]:8443")).toEqual({ host: "2001:db8::1", port: 8443 });
  expect(parseAuthority("pypi.org")).toBeNull();
  expect(parseHosts("# test\n127.0.0.2 a.test B.test\n::1 a.test\n")).toEqual(
    new Map([
      ["a.test", ["127.0.0.2", "::1"]],
      ["b.test", ["127.0.0.2"]],
    ]),
  );
});
