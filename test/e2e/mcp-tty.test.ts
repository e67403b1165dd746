// run_process with `tty` (docs/agents.md): a program that checks for a terminal finds one,
// what continue_process writes is typed at it, and its transcript comes back as stdout.
// Without `tty` the same program finds pipes. Through `sbx mcp` over stdio and the SDK's Client.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpSession, mcpOverStdio } from "../support/mcp-client.js";
import { until } from "../support/wait.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

const PROBE =
  'if [ -t 0 ] && [ -t 1 ]; then echo "on a terminal $(stty size)"; else echo "on pipes"; fi; read line; echo "got $line"';

describe("sbx mcp: run_process on a terminal", () => {
  let mcp: McpSession;
  beforeAll(async () => {
    mcp = await mcpOverStdio("sbx-mcp-tty-");
  });
  afterAll(async () => {
    await mcp?.close();
  });
  const call = (name: string, args: Record<string, unknown>): Promise<Json> => mcp.call(name, args);

  /** Starts PROBE, waits for its first line, types `hello`, and returns its whole stdout once it ended. */
  async function probe(extra: Record<string, unknown>): Promise<string> {
    const started = await call("run_process", { shell: PROBE, yield_ms: 0, ...extra });
    expect(started.isError, `${JSON.stringify(started)}\n${mcp.stderr()}`).toBeFalsy();
    const handle = started.structuredContent.handle;
    let out = started.structuredContent.stdout as string;
    let cursors = { stdout_cursor: started.structuredContent.stdout_cursor, stderr_cursor: 0 };
    await until(
      async () => {
        const r = (await call("continue_process", { handle, ...cursors })).structuredContent;
        out += r.stdout;
        cursors = { stdout_cursor: r.stdout_cursor, stderr_cursor: r.stderr_cursor };
        return out.includes("on ");
      },
      60_000,
      "its first line",
    );
    const ended = (await call("continue_process", { handle, ...cursors, write: "hello\n", yield_ms: 60_000 }))
      .structuredContent;
    expect(ended.status, JSON.stringify(ended)).toBe("exited");
    expect(ended.exit_code).toBe(0);
    return out + ended.stdout;
  }

  it("tty: a terminal of the size asked for, typed at, its transcript as stdout", async () => {
    const out = await probe({ tty: { cols: 100, rows: 30 } });
    expect(out).toContain("on a terminal 30 100");
    // The terminal echoes what was typed, then the program's answer (CR LF line ends).
    expect(out).toMatch(/hello\r?\n/);
    expect(out).toMatch(/got hello\r?\n/);
    expect((await call("run_process", { shell: "true", tty: true, yield_ms: 30_000 })).structuredContent).toMatchObject(
      {
        status: "exited",
        exit_code: 0,
      },
    );
  });

  it("without tty: pipes", async () => {
    const out = await probe({ stdin_open: true });
    expect(out).toBe("on pipes\ngot hello\n");
  });
});
