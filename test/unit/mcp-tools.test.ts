// The tool set of `sbx mcp`: what --tools chooses, what its help names, and how a
// result is bounded and kept free of keys. The calls themselves: test/e2e/mcp-stdio.test.ts.

import { describe, expect, it } from "vitest";
import { MCP_TOOL_NAMES } from "../../src/cli/commands/index.js";
import { MCP_TOOLS } from "../../src/cli/mcp/registry.js";
import { chooseTools, parseSettings } from "../../src/cli/mcp/server.js";
import { bound, toResult } from "../../src/cli/mcp/tool.js";
import { ConfigStore } from "../../src/config/config.js";
import { resolvePaths } from "../../src/config/paths.js";
import type { Context } from "../../src/cli/context.js";

describe("the tools of sbx mcp", () => {
  it("are the ones its help names, in the same order", () => {
    expect(MCP_TOOLS.map((t) => t.name)).toEqual([...MCP_TOOL_NAMES]);
  });

  it("--tools: names, read-only, all; an unknown name is refused with the list", () => {
    const managing = ["sandbox_create", "sandbox_stop"];
    expect(chooseTools(undefined, true).map((t) => t.name)).toEqual([...MCP_TOOL_NAMES]);
    expect(chooseTools(undefined).map((t) => t.name)).toEqual(MCP_TOOL_NAMES.filter((n) => !managing.includes(n)));
    expect(() => chooseTools("sandbox_stop")).toThrow(/--tools: sandbox_stop creates or stops sandboxes/);
    expect(chooseTools("sandbox_stop", true).map((t) => t.name)).toEqual(["sandbox_stop"]);
    expect(chooseTools("read-only", true).map((t) => t.name)).toEqual([
      "job_read",
      "await",
      "read_file",
      "list_files",
      "receipts_in_doubt",
      "receipt_show",
      "sandbox_list",
    ]);
    expect(chooseTools("receipt_show, run_command").map((t) => t.name)).toEqual(["run_command", "receipt_show"]);
    expect(() => chooseTools("run_command,rm_rf")).toThrow(/--tools: no tool "rm_rf"/);
    expect(() => chooseTools(",")).toThrow(/names no tool/);
  });

  it("--max-output-bytes is a number of bytes, 256 at least; --sandbox is checked", () => {
    expect(parseSettings({}, undefined)).toEqual({ sandbox: "default", maxOutputBytes: 65536 });
    expect(parseSettings({ maxOutputBytes: "1000", sandbox: "ci" }, "other")).toEqual({
      sandbox: "ci",
      maxOutputBytes: 1000,
    });
    expect(parseSettings({}, "other").sandbox).toBe("other");
    expect(() => parseSettings({ maxOutputBytes: "12" }, undefined)).toThrow(/256 at least/);
    expect(() => parseSettings({ maxOutputBytes: "1e6" }, undefined)).toThrow(/a number of bytes/);
    expect(() => parseSettings({ sandbox: "../x" }, undefined)).toThrow(/invalid sandbox/);
  });
});

describe("a result", () => {
  it("keeps the first and last parts of a long output and counts what it left out", () => {
    expect(bound("short", 10)).toEqual({ text: "short", omitted_bytes: 0 });
    expect(bound(null, 10)).toEqual({ text: "", omitted_bytes: 0 });
    expect(bound("0123456789abcdef", 10)).toEqual({ text: "01234\n[… 6 bytes omitted …]\nbcdef", omitted_bytes: 6 });
  });

  it("never carries an API key, in its text or anywhere in its structured content", () => {
    const env = { SBX_HOME: "/nonexistent-sbx-home", SBX_API_KEY: "sbx-key-0123456789" };
    const ctx = { env, config: new ConfigStore(resolvePaths(env)) } as unknown as Context;
    const result = toResult(ctx, {
      structured: { stdout: "the key is sbx-key-0123456789", nested: [{ e: "sbx-key-0123456789" }], n: 1 },
      text: "sbx-key-0123456789",
    });
    expect(JSON.stringify(result)).not.toContain("sbx-key-0123456789");
    expect(result.structuredContent).toEqual({
      stdout: "the key is [redacted]",
      nested: [{ e: "[redacted]" }],
      n: 1,
    });
  });
});
