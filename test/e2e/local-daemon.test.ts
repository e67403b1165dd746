// End-to-end: the built bin/sbx against the embedded backend it starts on demand.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lines, makeHome, modeOf, removeHome, runSbx, runSbxJson } from "../support/cli.js";
import { daemonPids, stopDaemon } from "../support/daemon.js";

interface Receipt {
  receipt_id: string;
  classification: string;
  exit: number | null;
  exit_code: number | null;
  signal: string | null;
  stdout: string | null;
  stderr: string | null;
  execution_id: string | null;
  idempotency_key: string;
}

describe("sbx against the auto-started local daemon", () => {
  let home: string;
  const sbx = (args: string[], input?: string | Buffer) =>
    runSbx(args, { home, ...(input === undefined ? {} : { input }) });

  beforeAll(() => {
    home = makeHome();
  });
  afterAll(async () => {
    await stopDaemon(home);
    removeHome(home);
  });

  it("starts the daemon on first use and runs argv with no shell", async () => {
    const r = await sbx(["exec", "--", "echo", "hello", "$HOME"]);
    expect(r.stdout).toBe("hello $HOME\n");
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("starting the local backend");
    const status = await runSbxJson<{ running: boolean; pid: number }>(["daemon", "status", "--json"], { home });
    expect(status.doc.running).toBe(true);
    expect(modeOf(path.join(home, "daemon", "daemon.sock"))).toBe(0o600);
    expect(modeOf(path.join(home, "receipts.db"))).toBe(0o600);
  });

  it("passes the command's stdout, stderr and exit code through", async () => {
    const r = await sbx(["exec", "--shell", "echo out; echo err >&2; exit 7"]);
    expect(r).toMatchObject({ code: 7, stdout: "out\n" });
    expect(r.stderr).toBe("err\n");
  });

  it("reports death by signal as 128+N and a server timeout as 124", async () => {
    const killed = await sbx(["exec", "--shell", "kill -9 $$"]);
    expect(killed.code).toBe(137);
    const slow = await sbx(["exec", "--timeout", "1s", "--", "sleep", "30"]);
    expect(slow.code).toBe(124);
    expect(slow.stderr).toContain("killed at its timeout");
  });

  it("sends stdin one-shot, byte for byte, and honours --cwd and --env", async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const { doc } = await runSbxJson<Receipt>(
      ["exec", "--json", "--stdin", "--", "sh", "-c", "od -An -tx1 | tr -d ' \\n'"],
      {
        home,
        input: bytes,
      },
    );
    expect(doc.stdout).toBe(bytes.toString("hex"));
    await sbx(["exec", "--", "mkdir", "-p", "sub/dir"]);
    const r = await sbx([
      "exec",
      "--cwd",
      "sub/dir",
      "--env",
      "GREETING=hi there",
      "--shell",
      'echo "$GREETING from $PWD"',
    ]);
    expect(r.stdout).toMatch(/^hi there from \/.+\/sub\/dir\n$/);
  });

  it("records a receipt for each exec that list/show/wait read back", async () => {
    const { doc } = await runSbxJson<Receipt>(["exec", "--json", "--", "echo", "recorded"], { home });
    expect(doc).toMatchObject({ classification: "succeeded", exit: 0, stdout: "recorded\n" });
    expect(doc.execution_id).toMatch(/^exe_/);
    const byExec = await runSbxJson<Receipt & { observations: unknown[] }>(
      ["receipts", "show", doc.execution_id!, "--json"],
      {
        home,
      },
    );
    expect(byExec.doc.receipt_id).toBe(doc.receipt_id);
    expect(byExec.doc.observations.length).toBe(2);
    const waited = await sbx(["receipts", "wait", doc.receipt_id.slice(0, 12)]);
    expect(waited).toMatchObject({ code: 0, stdout: "recorded\n" });
    const list = await sbx(["receipts", "list", "--classification", "succeeded"]);
    expect(lines(list.stdout)[0]).toBe("RECEIPT\tCLASSIFICATION\tEXIT\tSANDBOX\tCOMMAND\tCREATED");
    expect(list.stdout).toContain(doc.receipt_id);
  });

  it("runs in a named sandbox with its own workspace", async () => {
    const created = await runSbxJson<{ sandbox_id: string; name: string }>(["sandbox", "create", "build", "--json"], {
      home,
    });
    expect(created.doc.name).toBe("build");
    await sbx(["exec", "-s", "build", "--", "touch", "only-here"]);
    expect((await sbx(["exec", "-s", "build", "--", "ls"])).stdout).toBe("only-here\n");
    expect((await sbx(["exec", "--", "ls", "only-here"])).code).not.toBe(0);
    const rm = await sbx(["sandbox", "rm", "build"]);
    expect(rm.code).toBe(0);
    const gone = await sbx(["exec", "-s", "build", "--", "true"]);
    expect(gone.code).toBe(125);
    expect(gone.stderr).toContain("sandbox_not_found");
  });

  it("refuses a key reused with a different body (422) as rejected, and replays the same body", async () => {
    const key = `reuse-${Date.now()}`;
    const first = await runSbxJson<Receipt>(
      ["exec", "--json", "--idempotency-key", key, "--", "sh", "-c", "echo ran >> ran.log"],
      {
        home,
      },
    );
    expect(first.result.code).toBe(0);
    const again = await runSbxJson<Receipt>(
      ["exec", "--json", "--idempotency-key", key, "--", "sh", "-c", "echo ran >> ran.log"],
      {
        home,
      },
    );
    expect(again.doc.execution_id).toBe(first.doc.execution_id);
    expect((await sbx(["exec", "--", "cat", "ran.log"])).stdout).toBe("ran\n");
    const other = await sbx(["exec", "--idempotency-key", key, "--", "echo", "different"]);
    expect(other.code).toBe(125);
    expect(other.stderr).toContain("idempotency_key_reused");
  });
});

describe("daemon start-up", () => {
  it("starts exactly one daemon when several sbx processes need it at once", async () => {
    const home = makeHome();
    try {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => runSbx(["exec", "--", "echo", String(i)], { home, timeoutMs: 40_000 })),
      );
      expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0]);
      expect(results.map((r) => r.stdout).sort()).toEqual(["0\n", "1\n", "2\n", "3\n", "4\n", "5\n"]);
      expect(daemonPids(home)).toHaveLength(1);
    } finally {
      await stopDaemon(home);
      removeHome(home);
    }
  });

  it("daemon stop ends it and status then says so with exit 3", async () => {
    const home = makeHome();
    try {
      expect((await runSbx(["daemon", "start"], { home })).code).toBe(0);
      expect(daemonPids(home)).toHaveLength(1);
      expect((await runSbx(["daemon", "stop"], { home })).code).toBe(0);
      expect(daemonPids(home)).toHaveLength(0);
      expect(fs.existsSync(path.join(home, "daemon", "daemon.sock"))).toBe(false);
      const status = await runSbx(["daemon", "status"], { home });
      expect(status.code).toBe(3);
      expect(status.stdout).toMatch(/^not running/);
    } finally {
      await stopDaemon(home);
      removeHome(home);
    }
  });
});
