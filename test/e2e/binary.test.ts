// The release artifact: a single binary compiled with Bun from the same sources.
// Its runtime differences (SQLite driver, HTTP transport) sit behind src/platform;
// this proves the binary runs the main job end to end.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ExitCodes } from "../../src/common/exit-codes.js";
import { BUILD_HOOK_TIMEOUT_MS, buildReleaseBinary } from "../support/binary.js";
import { makeHome, receiptsDbOf, removeHome, sbxEnv } from "../support/cli.js";
import { runMain } from "../support/in-process.js";
import { describeNeeding, itNeeding } from "../support/requirements.js";

describeNeeding("binary", "the Bun-compiled binary", () => {
  let home: string;
  let binary: string;
  const run = (args: string[]) => {
    const r = spawnSync(binary, args, { env: sbxEnv(home), encoding: "utf8", timeout: 30_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  beforeAll(() => {
    home = makeHome("sbx-bin-");
    binary = path.join(home, "sbx");
    buildReleaseBinary(binary);
  }, BUILD_HOOK_TIMEOUT_MS);

  afterAll(() => {
    run(["daemon", "stop"]);
    removeHome(home);
  });

  it("runs exec on its own embedded backend, with receipts in bun:sqlite", () => {
    expect(run(["--version"]).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const r = run(["exec", "--", "echo", "hello"]);
    expect(r).toMatchObject({ code: 0, stdout: "hello\n" });
    const failed = run(["exec", "--stream", "--shell", "echo live; exit 4"]);
    expect(failed).toMatchObject({ code: 4, stdout: "live\n" });
    const list = JSON.parse(run(["receipts", "list", "--json"]).stdout) as Array<{
      receipt_id: string;
      classification: string;
    }>;
    expect(list.map((d) => d.classification)).toEqual(["failed", "succeeded"]);
    const shown = JSON.parse(run(["receipts", "show", list[1]!.receipt_id, "--json"]).stdout);
    expect(shown.observations.length).toBe(2);
  });

  it("chains its receipts as Node does: a store written by either verifies under the other", async () => {
    // Output that needs escaping in canonical JSON, written by bun:sqlite.
    const tricky = run(["exec", "--", "printf", '\\001\\t\\033[31mé ☃ 😀\\177\\n"quoted"\\\\']);
    expect(tricky.code).toBe(0);
    expect(run(["receipts", "verify"]).code).toBe(0);
    // Written by Node (better-sqlite3), verified by the binary.
    const inNode = await runMain(["exec", "--", "printf", "%s\\n", "node é"], { home });
    expect(inNode.code).toBe(0);
    const both = run(["receipts", "verify", "--json"]);
    expect(both.code, both.stdout).toBe(0);
    expect(JSON.parse(both.stdout)).toMatchObject({ intact: true, problems: [] });
    expect((await runMain(["receipts", "verify"], { home })).code).toBe(0);
    // A change made with SQLite is named by the binary too.
    const db = new Database(receiptsDbOf(home));
    db.prepare("UPDATE observations SET stdout = 'x' WHERE id = (SELECT MAX(id) FROM observations)").run();
    db.close();
    const broken = run(["receipts", "verify"]);
    expect(broken.code).toBe(ExitCodes.notIntact);
    expect(broken.stdout).toMatch(/ changed {4}observation 2 \(answer\) \(position \d+\) was changed/);
  });

  it("signs bundles as Node does: one made by either verifies under the other, with the same key", async (t) => {
    const h = makeHome("sbx-bin-bundle-");
    t.onTestFinished(() => removeHome(h));
    const inH = (args: string[]) => {
      const r = spawnSync(binary, args, { env: sbxEnv(h), encoding: "utf8", timeout: 30_000 });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    // Receipts written by the binary (refused by a port nobody listens on: no daemon needed).
    expect(inH(["exec", "--api-url", "http://127.0.0.1:9", "--", "true"]).code).toBe(ExitCodes.notStarted);
    const key = inH(["receipts", "key"]).stdout.trim();
    expect((await runMain(["receipts", "key"], { home: h })).stdout.trim()).toBe(key);
    const byBinary = path.join(h, "by-binary.sbx");
    expect(inH(["receipts", "export", "--bundle", byBinary]).code).toBe(0);
    expect((await runMain(["receipts", "verify", "--bundle", byBinary, "--key", key], { home: h })).code).toBe(0);
    const byNode = path.join(h, "by-node.sbx");
    expect((await runMain(["receipts", "export", "--bundle", byNode], { home: h })).code).toBe(0);
    const checked = inH(["receipts", "verify", "--bundle", byNode, "--key", key]);
    expect(checked.code, checked.stdout).toBe(0);
    // One byte changed fails under the binary too.
    const bytes = fs.readFileSync(byNode);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x01;
    fs.writeFileSync(byNode, bytes);
    expect(inH(["receipts", "verify", "--bundle", byNode, "--key", key]).code).toBe(ExitCodes.notIntact);
  });

  it("prints large output whole into a pipe (byte for byte), exec and --json alike", () => {
    const size = 3_000_000;
    const want = createHash("sha256").update(Buffer.alloc(size, 0)).digest("hex");
    const r = spawnSync(binary, ["exec", "--", "head", "-c", String(size), "/dev/zero"], {
      env: sbxEnv(home),
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(r.status, r.stderr.toString()).toBe(0);
    expect(r.stdout.length).toBe(size);
    expect(createHash("sha256").update(r.stdout).digest("hex")).toBe(want);
    const json = spawnSync(binary, ["exec", "--json", "--", "head", "-c", String(size), "/dev/zero"], {
      env: sbxEnv(home),
      encoding: "utf8",
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ classification: "succeeded", stdout_truncated: true });
  });

  it("names a corrupt receipt store and exits 74 under bun:sqlite too", () => {
    const other = makeHome("sbx-bin-corrupt-");
    try {
      fs.writeFileSync(path.join(other, "receipts.db"), Buffer.alloc(8192, "not a database "));
      const r = spawnSync(binary, ["receipts", "list"], { env: sbxEnv(other), encoding: "utf8", timeout: 30_000 });
      expect(r.status).toBe(74);
      expect(r.stderr).toContain(`the receipt store ${path.join(other, "receipts.db")} is unusable`);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    } finally {
      removeHome(other);
    }
  });

  it("classifies a refused connection as not_started (75)", () => {
    const r = run(["exec", "--api-url", "http://127.0.0.1:9", "--", "true"]);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain("nothing ran");
  });

  const terminalSession = async (isolation: "none" | "bwrap") => {
    expect(run(["sandbox", "create", `tty-${isolation}`, "--isolation", isolation]).code).toBe(0);
    const { OuterTerminal } = await import("../support/outer-terminal.js");
    const t = new OuterTerminal(
      `'${binary}' exec -it -s tty-${isolation} -- sh -c 'tty; read line; echo "got $line"; exit 3'; echo "sbx-exit=$?"`,
      {
        cwd: home,
        env: sbxEnv(home),
      },
    );
    try {
      await t.waitFor(/\/dev\/pts\/\d+/, "the terminal's name");
      t.type("typed\r");
      await t.waitFor("got typed", "the line read back");
      await t.waitFor("sbx-exit=3", "sbx to exit 3");
    } finally {
      t.kill();
    }
  };

  it("runs a terminal session on Bun's own PTY: a /dev/pts terminal of the sandbox's, input typed, exit 3 as sbx's", () =>
    terminalSession("none"));
  // The binary's own init opens the terminal inside the sandbox (Bun's terminal there).
  itNeeding("bwrap", "runs a terminal session in a bwrap sandbox, on a terminal its init opened inside it", () =>
    terminalSession("bwrap"),
  );
});
