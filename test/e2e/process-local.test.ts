// End-to-end: supervised processes through bin/sbx against the embedded backend.

import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProcessResult } from "../../src/protocol/types.js";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { lines, makeHome, removeHome, runSbx, runSbxJson } from "../support/cli.js";
import { startForegroundDaemon, stopDaemon, stopForegroundDaemon } from "../support/daemon.js";

describe("sbx process against the local backend", () => {
  let home: string;
  const sbx = (args: string[], input?: string | Buffer, timeoutMs?: number) =>
    runSbx(args, { home, ...(input === undefined ? {} : { input }), ...(timeoutMs ? { timeoutMs } : {}) });
  const start = async (args: string[]) => {
    const r = await sbx(["process", "start", ...args]);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  };
  const result = async (id: string, wait = "30s") =>
    (await runSbxJson<ProcessResult>(["process", "result", id, "--wait", wait, "--json"], { home })).doc;

  beforeAll(async () => {
    home = makeHome("sbx-e2e-proc-");
    await sbx(["daemon", "start"]);
  });
  afterAll(async () => {
    await stopDaemon(home);
    removeHome(home);
  });

  it("starts a worker with a receipt and prints its id", async () => {
    const { result: r, doc } = await runSbxJson<ReceiptDocument>(
      ["process", "start", "--json", "--name", "hello", "--", "echo", "hi"],
      { home },
    );
    expect(r.code).toBe(0);
    expect(doc).toMatchObject({ kind: "process_start", classification: "succeeded", may_have_run: true });
    expect(doc.execution_id).toMatch(/^prc_/);
    expect(doc.request.path).toBe("/api/v1/sandbox/default/processes");
    const listed = await runSbxJson<{ processes: Array<{ process_id: string; name: string }> }>(["ps", "--json"], {
      home,
    });
    expect(listed.doc.processes.map((p) => p.process_id)).toContain(doc.execution_id);
    expect((await sbx(["process", "logs", "hello", "-f"])).stdout).toBe("hi\n");
  });

  it("round-trips all 256 byte values through --stdin and cat", async () => {
    const id = await start(["--stdin", "--", "cat"]);
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    expect((await sbx(["process", "stdin", id, "--eof"], bytes)).code).toBe(0);
    // Wait for the end (eof), then read the bytes as JSON (base64), which keeps them exact.
    expect((await runSbx(["process", "logs", id, "-f", "--raw"], { home })).code).toBe(0);
    const json = lines((await sbx(["process", "logs", id, "--json", "--stream", "stdout"])).stdout).map((l) =>
      JSON.parse(l),
    );
    const data = Buffer.concat(json.map((c) => Buffer.from(c.data, "base64")));
    expect(data.equals(bytes)).toBe(true);
  });

  it("reads 15 MB of seq output back with an identical sha256, and two reads joined by next_offset lose nothing", async () => {
    const id = await start(["--", "seq", "1", "2100000"]);
    expect((await result(id)).outcome).toBe("succeeded");
    const expected = createHash("sha256")
      .update(`${Array.from({ length: 2_100_000 }, (_, i) => i + 1).join("\n")}\n`)
      .digest("hex");
    const first = lines(
      (await sbx(["process", "logs", id, "--json", "--stream", "stdout", "--limit", "1000003"])).stdout,
    ).map((l) => JSON.parse(l));
    const next = first.at(-1).next_offset;
    expect(next).toBe(1_000_003);
    const rest = lines(
      (await sbx(["process", "logs", id, "--json", "--stream", "stdout", "--offset", String(next)], undefined, 60_000))
        .stdout,
    ).map((l) => JSON.parse(l));
    const all = Buffer.concat([...first, ...rest].map((c) => Buffer.from(c.data, "base64")));
    expect(all.length).toBeGreaterThan(15_000_000);
    expect(createHash("sha256").update(all).digest("hex")).toBe(expected);
  });

  it("on-failure with --max-restarts 2 runs exactly 3 times and keeps every run's output", async () => {
    const id = await start([
      "--restart",
      "on-failure",
      "--max-restarts",
      "2",
      "--backoff",
      "100ms",
      "--",
      "sh",
      "-c",
      "echo run; exit 1",
    ]);
    const r = await result(id);
    expect(r).toMatchObject({ outcome: "failed", exit_code: 1, restarts: 2, complete: true });
    expect((await sbx(["process", "logs", id])).stdout).toBe("run\nrun\nrun\n");
  });

  it("--timeout ends it as timed_out; TERM is reported as SIGTERM with exit code null", async () => {
    const slow = await start(["--timeout", "1s", "--", "sleep", "30"]);
    expect((await result(slow)).outcome).toBe("timed_out");
    const sleeper = await start(["--", "sleep", "30"]);
    expect((await sbx(["process", "signal", sleeper, "TERM"])).code).toBe(0);
    expect(await result(sleeper)).toMatchObject({ signal: "SIGTERM", exit_code: null, outcome: "failed" });
  });

  it("stop ends the group and keeps the process; rm removes it", async () => {
    const id = await start(["--", "sleep", "30"]);
    const stopped = await sbx(["process", "stop", id, "--grace", "1s"]);
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(new RegExp(`^${id}\\texited`));
    expect((await sbx(["process", "rm", id])).code).toBe(0);
    const gone = await sbx(["process", "show", id]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/^sbx: process prc_\w+: no process/m);
  });

  it("refuses stdin for a process started without --stdin, and unknown ids, with clear errors", async () => {
    const id = await start(["--", "sleep", "5"]);
    const refused = await sbx(["process", "stdin", id], "data");
    expect(refused.code).toBe(125);
    expect(refused.stderr).toContain("without --stdin");
    const unknown = await sbx(["process", "result", "prc_doesnotexist"]);
    expect(unknown.code).not.toBe(0);
    expect(lines(unknown.stderr)[0]).toMatch(/^sbx: .*prc_doesnotexist/);
    const bad = await sbx(["process", "signal", id, "STOP"]);
    expect(bad.code).toBe(125);
    await sbx(["process", "rm", id, "--grace", "0s"]);
  });
});

describe("process logs across rotation", () => {
  it("says on stderr when bytes were rotated away, and reads on from the oldest kept offset", async () => {
    const home = makeHome("sbx-e2e-rot-");
    const daemon = await startForegroundDaemon(home, ["--process-log-segment", "1k", "--process-log-keep", "4k"]);
    try {
      const started = await runSbx(["process", "start", "--", "seq", "1", "5000"], { home });
      const id = started.stdout.trim();
      await runSbx(["process", "result", id, "--wait", "20s"], { home });
      const read = await runSbx(["process", "logs", id, "--raw", "--stream", "stdout"], { home });
      expect(read.code).toBe(0);
      expect(read.stderr).toMatch(/bytes of stdout \(offsets 0\.\.(\d+)\) were rotated away/);
      const all = `${Array.from({ length: 5000 }, (_, i) => i + 1).join("\n")}\n`;
      expect(all.endsWith(read.stdout)).toBe(true);
      expect(read.stdout.length).toBeGreaterThanOrEqual(3 * 1024);
      expect(read.stdout.length).toBeLessThan(all.length);
      const chunks = lines(
        (await runSbx(["process", "logs", id, "--json", "--stream", "stdout"], { home })).stdout,
      ).map((l) => JSON.parse(l));
      expect(chunks[0]).toMatchObject({ rotated: true });
      expect(chunks[0].offset).toBe(chunks[0].oldest_offset);
      expect(chunks.at(-1).next_offset).toBe(Buffer.byteLength(all));
    } finally {
      await stopForegroundDaemon(daemon);
      removeHome(home);
    }
  });
});

describe("process logs --text", () => {
  it("never splits a UTF-8 character between reads", async () => {
    const home = makeHome("sbx-e2e-utf8-");
    try {
      const started = await runSbx(
        [
          "process",
          "start",
          "--shell",
          "printf 'caf\\303'; sleep 0.7; printf '\\251 \\342\\202'; sleep 0.7; printf '\\254\\n'",
        ],
        { home },
      );
      const id = started.stdout.trim();
      const text = await runSbx(["process", "logs", id, "-f", "--text"], { home });
      expect(text.stdout).toBe("café €\n");
    } finally {
      await stopDaemon(home);
      removeHome(home);
    }
  });
});
