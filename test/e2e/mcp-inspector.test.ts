// A third-party MCP client against `sbx mcp`: the inspector's CLI mode
// (@modelcontextprotocol/inspector-cli, pinned in devDependencies: the `--cli` mode of
// @modelcontextprotocol/inspector, whose own package needs Node 22), spawning bin/sbx
// mcp over stdio as any client config does. Its printed answers are checked.

import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeHome, removeHome, SBX_BIN, sbxEnv } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const INSPECTOR = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/inspector-cli/package.json")),
  "build",
  "index.js",
);

describe("the MCP inspector's CLI mode against sbx mcp", () => {
  let home: string;
  beforeAll(() => {
    home = makeHome("sbx-mcp-inspector-");
  });
  afterAll(async () => {
    await stopDaemon(home);
    removeHome(home);
  });

  async function inspect(args: string[]): Promise<Json> {
    const { stdout } = await run(process.execPath, [INSPECTOR, process.execPath, SBX_BIN, "mcp", ...args], {
      env: sbxEnv(home) as NodeJS.ProcessEnv,
      cwd: home,
      timeout: 120_000,
      maxBuffer: 1 << 24,
    });
    return JSON.parse(stdout);
  }

  it("tools/list: every tool with its schemas", async () => {
    const listed = await inspect(["--method", "tools/list"]);
    const names = listed.tools.map((t: Json) => t.name);
    expect(names).toContain("run_process");
    expect(names).toContain("receipts_in_doubt");
    const run = listed.tools.find((t: Json) => t.name === "run_command");
    expect(run.inputSchema.properties.argv.type).toBe("array");
    expect(run.outputSchema.properties.receipt_id.type).toBe("string");
  });

  it("tools/call: a command run, its receipt named, and a refused input", async () => {
    const called = await inspect([
      "--method",
      "tools/call",
      "--tool-name",
      "run_command",
      "--tool-arg",
      'argv=["sh", "-c", "echo from-inspector; exit 2"]',
    ]);
    expect(called.isError).toBeFalsy();
    expect(called.structuredContent).toMatchObject({
      status: "exited",
      exit_code: 2,
      stdout: "from-inspector\n",
      classification: "failed",
    });
    expect(called.content[0].text).toContain(`exited 2 (${called.structuredContent.receipt_id})`);
    const refused = await inspect([
      "--method",
      "tools/call",
      "--tool-name",
      "run_command",
      "--tool-arg",
      "argv=not-a-list",
    ]);
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toContain("does not match its schema");
  });
});
