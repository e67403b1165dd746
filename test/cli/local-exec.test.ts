// sbx exec against the embedded backend, in-process through main() (the daemon's
// start-up on first use is in test/e2e/local-daemon): output and exit codes passed
// through, stdin byte for byte, --cwd and --env, receipts read back, named sandboxes,
// and idempotency keys.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lines, type SbxResult } from "../support/cli.js";
import { type LocalHome, localHome } from "../support/in-process.js";

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

describe("sbx exec against the local backend", () => {
  let local: LocalHome;
  const sbx = (args: string[], input?: string | Buffer): Promise<SbxResult> =>
    local.sbx(args, input === undefined ? {} : { input });

  beforeAll(async () => {
    local = await localHome("sbx-local-exec-");
  });
  afterAll(() => local.close());

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
    const { doc } = await local.json<Receipt>(
      ["exec", "--json", "--stdin", "--", "sh", "-c", "od -An -tx1 | tr -d ' \\n'"],
      { input: bytes },
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
    const { doc } = await local.json<Receipt>(["exec", "--json", "--", "echo", "recorded"]);
    expect(doc).toMatchObject({ classification: "succeeded", exit: 0, stdout: "recorded\n" });
    expect(doc.execution_id).toMatch(/^exe_/);
    const byExec = await local.json<Receipt & { observations: unknown[] }>([
      "receipts",
      "show",
      doc.execution_id!,
      "--json",
    ]);
    expect(byExec.doc.receipt_id).toBe(doc.receipt_id);
    expect(byExec.doc.observations.length).toBe(2);
    // A prefix into the random part: the time part alone is shared by receipts made in the same 36 ms.
    const waited = await sbx(["receipts", "wait", doc.receipt_id.slice(0, 18)]);
    expect(waited, waited.stderr).toMatchObject({ code: 0, stdout: "recorded\n" });
    // Every wait is bounded and says what it waits for, and for how long at most.
    expect(waited.stderr).toContain(
      `sbx: waiting up to 15m for ${doc.receipt_id} to settle (it is succeeded; --timeout to change)`,
    );
    const list = await sbx(["receipts", "list", "--classification", "succeeded"]);
    expect(lines(list.stdout)[0]).toBe("RECEIPT\tCLASSIFICATION\tEXIT\tSANDBOX\tCOMMAND\tCREATED");
    expect(list.stdout).toContain(doc.receipt_id);
  });

  it("runs in a named sandbox with its own workspace", async () => {
    const created = await local.json<{ sandbox_id: string; name: string }>(["sandbox", "create", "build", "--json"]);
    expect(created.doc.name).toBe("build");
    await sbx(["exec", "-s", "build", "--", "touch", "only-here"]);
    expect((await sbx(["exec", "-s", "build", "--", "ls"])).stdout).toBe("only-here\n");
    expect((await sbx(["exec", "--", "ls", "only-here"])).code).not.toBe(0);
    // Its workspace holds a file: off a terminal, not removed without --force, saying what would go.
    const refused = await sbx(["sandbox", "rm", "build"]);
    expect(refused.code).toBe(125);
    expect(refused.stderr).toContain("removing sandbox build deletes its workspace: 1 file (");
    expect(refused.stderr).toContain("--force");
    expect((await sbx(["exec", "-s", "build", "--", "ls"])).stdout).toBe("only-here\n");
    const rm = await sbx(["sandbox", "rm", "build", "--force"]);
    expect(rm.code).toBe(0);
    const gone = await sbx(["exec", "-s", "build", "--", "true"]);
    expect(gone.code).toBe(125);
    expect(gone.stderr).toContain("sandbox_not_found");
    // ... and says what to do about it, as a read of a missing sandbox does.
    expect(gone.stderr).toContain("Create it first (sbx sandbox create build)");
    const shown = await sbx(["sandbox", "show", "build"]);
    expect(shown.code).toBe(125);
    expect(lines(shown.stderr)).toEqual([
      'sbx: sandbox build: no sandbox "build"',
      "hint: see `sbx sandbox list`; `sbx sandbox create NAME` makes one",
    ]);
  });

  it("refuses a key reused with a different body (422) as rejected, and replays the same body", async () => {
    const key = `reuse-${Date.now()}`;
    const first = await local.json<Receipt>([
      "exec",
      "--json",
      "--idempotency-key",
      key,
      "--",
      "sh",
      "-c",
      "echo ran >> ran.log",
    ]);
    expect(first.result.code).toBe(0);
    const again = await local.json<Receipt>([
      "exec",
      "--json",
      "--idempotency-key",
      key,
      "--",
      "sh",
      "-c",
      "echo ran >> ran.log",
    ]);
    expect(again.doc.execution_id).toBe(first.doc.execution_id);
    expect((await sbx(["exec", "--", "cat", "ran.log"])).stdout).toBe("ran\n");
    const other = await sbx(["exec", "--idempotency-key", key, "--", "echo", "different"]);
    expect(other.code).toBe(125);
    expect(other.stderr).toContain("idempotency_key_reused");
  });
});
