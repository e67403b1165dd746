// Signed bundles, in-process through main(): made by one store, verified on a fresh
// SBX_HOME that has no store (nothing is created there); a single changed byte
// anywhere, or another key, fails; --since, prunes and a tampered store carried over.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { ExitCodes } from "../../src/common/exit-codes.js";
import { resolvePaths } from "../../src/config/paths.js";
import { verifyBundle } from "../../src/receipts/bundle.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { makeHome, removeHome } from "../support/cli.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { itNeeding } from "../support/requirements.js";
import { deadlineAnswer, newReceipt, succeededAnswer } from "../support/receipt-store.js";

function home(t: TestContext, receipts = 3) {
  const dir = makeHome("sbx-bundle-");
  t.onTestFinished(() => removeHome(dir));
  const store = ReceiptStore.open(resolvePaths({ SBX_HOME: dir }).receiptsDb);
  const ids: string[] = [];
  try {
    for (let i = 0; i < receipts; i++) {
      const at = new Date(Date.UTC(2026, 2, 1, 10, i));
      const id = store.createForDispatch(newReceipt(), at).receipt_id;
      store.recordObservation(id, "answer", i % 2 ? deadlineAnswer() : succeededAnswer(`exe_${i}`), {
        attempt: 1,
        now: new Date(at.getTime() + 500),
      });
      ids.push(id);
    }
  } finally {
    store.close();
  }
  return { dir, ids, file: path.join(dir, "out.sbx") };
}

async function keyOf(dir: string): Promise<string> {
  const r = await runMain(["receipts", "key"], { home: dir });
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

describe.concurrent("sbx receipts export --bundle and verify --bundle", () => {
  it("a home without a store: 74, saying so; no store, no key and no bundle made", async (t) => {
    const home = makeHome("sbx-bundle-none-");
    t.onTestFinished(() => removeHome(home));
    const out = path.join(home, "incident.sbx");
    const r = await runMain(["receipts", "export", "--bundle", out], { home });
    expect(r.code).toBe(ExitCodes.storeUnusable);
    expect(r.stderr).toContain(`no receipt store at ${resolvePaths({ SBX_HOME: home }).receiptsDb}`);
    const paths = resolvePaths({ SBX_HOME: home });
    expect([paths.receiptsDb, paths.receiptsKey, out].filter((f) => fs.existsSync(f))).toEqual([]);
  });

  it("verifies on a fresh SBX_HOME with the signer's key, and creates nothing there", async (t) => {
    const { dir, file } = home(t);
    const made = await runMainJson<{ receipts: number; entries: number; key: string; fingerprint: string }>(
      ["receipts", "export", "--bundle", file, "--json"],
      { home: dir },
    );
    expect(made.result.code).toBe(0);
    expect(made.doc).toMatchObject({ receipts: 3, entries: 13, key: await keyOf(dir) });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const elsewhere = makeHome("sbx-bundle-elsewhere-");
    t.onTestFinished(() => removeHome(elsewhere));
    const r = await runMain(["receipts", "verify", "--bundle", file, "--key", made.doc.key], { home: elsewhere });
    expect(r.code).toBe(ExitCodes.ok);
    expect(r.stdout.split("\n").slice(0, 3)).toEqual([
      `${file}: intact`,
      `  signed by ${made.doc.fingerprint} (the key given): signature valid`,
      expect.stringMatching(/^ {2}made \S+: every receipt$/),
    ]);
    expect(r.stderr).toBe("");
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it("without --key: verifies against the key it names, and says so", async (t) => {
    const { dir, file } = home(t, 1);
    await runMain(["receipts", "export", "--bundle", file], { home: dir });
    const r = await runMain(["receipts", "verify", "--bundle", file], { home: dir });
    expect(r.code).toBe(ExitCodes.ok);
    expect(r.stdout).toContain("(the key it names, not checked against one you trust): signature valid");
    expect(r.stderr).toMatch(/to know who signed it, pass --key/);
  });

  it("fails with any single byte changed, anywhere in the file", async (t) => {
    const { dir, file } = home(t, 1);
    await runMain(["receipts", "export", "--bundle", file], { home: dir });
    const bytes = fs.readFileSync(file);
    const key = Buffer.from(await keyOf(dir), "base64");
    expect(verifyBundle(bytes, key).intact).toBe(true);
    const survived: number[] = [];
    for (let i = 0; i < bytes.length; i++) {
      const changed = Buffer.from(bytes);
      changed[i] = changed[i]! ^ 0x01;
      if (verifyBundle(changed, key).intact) survived.push(i);
    }
    expect(survived).toEqual([]);
    // And through the command: named, exit 200.
    const one = Buffer.from(bytes);
    const at = one.indexOf("exe_0");
    one[at + 4] = "1".charCodeAt(0);
    fs.writeFileSync(file, one);
    const r = await runMain(["receipts", "verify", "--bundle", file, "--key", key.toString("base64")], { home: dir });
    expect(r.code).toBe(ExitCodes.notIntact);
    expect(r.stdout).toContain(
      "(bundle)  broken     its signature does not verify: the bundle was changed after it was signed",
    );
    expect(r.stdout).toMatch(/ changed {4}observation 2 \(answer\) \(position \d+\) was changed/);
  });

  it("fails with another store's key", async (t) => {
    const { dir, file } = home(t, 1);
    const other = home(t, 1);
    await runMain(["receipts", "export", "--bundle", file], { home: dir });
    const r = await runMain(["receipts", "verify", "--bundle", file, "--key", await keyOf(other.dir)], {
      home: other.dir,
    });
    expect(r.code).toBe(ExitCodes.notIntact);
    expect(r.stdout).toMatch(/signed by SHA256:\S+ \(NOT the key given\): signature valid/);
    expect(r.stdout).toMatch(/\(bundle\) {2}broken {5}it was signed by another key \(SHA256:\S+\), not the one given/);
  });

  it("--since: only newer receipts, with the chain from their first position; verifies", async (t) => {
    const { dir, ids, file } = home(t, 4);
    const made = await runMainJson<{ receipts: number; entries: number }>(
      ["receipts", "export", "--bundle", file, "--since", "2026-03-01T10:02:00Z", "--json"],
      { home: dir },
    );
    expect(made.doc).toMatchObject({ receipts: 2, entries: 8 });
    const text = fs.readFileSync(file, "utf8");
    expect(text).toContain(ids[3]);
    expect(text).not.toContain(ids[1]);
    const r = await runMainJson<{ intact: boolean; chain: { receipts: number } }>(
      ["receipts", "verify", "--bundle", file, "--json"],
      { home: dir },
    );
    expect(r.result.code).toBe(0);
    expect(r.doc).toMatchObject({ intact: true, signature: "valid", chain: { receipts: 2, entries: 8 } });
  });

  it("a pruned store's bundle verifies, the prune said; a tampered store's names its problems", async (t) => {
    const { dir, ids, file } = home(t, 4);
    await runMain(["receipts", "prune", "--before", "2026-03-01T10:01:30Z", "--include-in-doubt"], { home: dir });
    await runMain(["receipts", "export", "--bundle", file], { home: dir });
    const pruned = await runMain(["receipts", "verify", "--bundle", file], { home: dir });
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toMatch(/pruned \S+: 2 receipts \(8 entries\) created before 2026-03-01T10:01:30.000Z/);

    const db = new (await import("better-sqlite3")).default(resolvePaths({ SBX_HOME: dir }).receiptsDb);
    db.prepare("UPDATE observations SET stdout = 'fine' WHERE receipt_id = ? AND source = 'answer'").run(ids[2]);
    db.close();
    await runMain(["receipts", "export", "--bundle", file], { home: dir });
    const r = await runMain(["receipts", "verify", "--bundle", file], { home: dir });
    expect(r.code).toBe(ExitCodes.notIntact);
    expect(r.stdout).toContain("signature valid");
    expect(r.stdout).toMatch(new RegExp(`${ids[2]} {2}changed {4}observation 2 \\(answer\\)`));
  });

  it("to stdout with -, and read from stdin with -", async (t) => {
    const { dir } = home(t, 1);
    const out = await runMain(["receipts", "export", "--bundle", "-"], { home: dir });
    expect(out.code).toBe(0);
    expect(out.stdout.split("\n")[0]).toMatch(/^\{"algorithm":"ed25519","format":"sbx-receipts-bundle",/);
    const r = await runMain(["receipts", "verify", "--bundle", "-"], { home: dir, input: out.stdout });
    expect(r.code).toBe(0);
  });

  it("not a bundle: exit 200, said; a missing file: 125", async (t) => {
    const { dir, file } = home(t, 0);
    fs.writeFileSync(file, "hello\n");
    const r = await runMain(["receipts", "verify", "--bundle", file], { home: dir });
    expect(r.code).toBe(ExitCodes.notIntact);
    expect(r.stdout).toContain("it is not an sbx receipts bundle");
    const missing = await runMain(["receipts", "verify", "--bundle", `${file}.nope`], { home: dir });
    expect(missing.code).toBe(ExitCodes.usage);
    const badKey = await runMain(["receipts", "verify", "--bundle", file, "--key", "nope"], { home: dir });
    expect(badKey.code).toBe(ExitCodes.usage);
    expect(badKey.stderr).toContain('--key "nope": not an Ed25519 public key');
  });

  it("the key: made once, 0600, the same after; one others may read is refused", async (t) => {
    const { dir } = home(t, 0);
    const keyFile = resolvePaths({ SBX_HOME: dir }).receiptsKey;
    const first = await keyOf(dir);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(await keyOf(dir)).toBe(first);
    const pem = await runMain(["receipts", "key", "--pem"], { home: dir });
    expect(pem.stdout).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n$/);
    fs.chmodSync(keyFile, 0o644);
    const refused = await runMain(["receipts", "key"], { home: dir });
    expect(refused.code).toBe(ExitCodes.storeUnusable);
    expect(refused.stderr).toContain(`refusing the signing key ${keyFile}: others may read or write it (mode 644)`);
  });

  itNeeding("openssl", "verifies with openssl as docs/receipt-bundle.md says", async (t) => {
    const { dir, file } = home(t, 2);
    await runMain(["receipts", "export", "--bundle", file], { home: dir });
    fs.writeFileSync(path.join(dir, "pub.pem"), (await runMain(["receipts", "key", "--pem"], { home: dir })).stdout);
    const page = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "receipt-bundle.md"), "utf8");
    const script = /```sh\n([\s\S]*?)```/.exec(page)![1]!.replaceAll("incident.sbx", file);
    const r = spawnSync("sh", ["-euc", script], { cwd: dir, encoding: "utf8" });
    expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({
      status: 0,
      out: "Signature Verified Successfully\n",
    });
  });
});
