// What sbx exec prints is exactly and completely what the command wrote, in every
// mode: bytes that are not UTF-8, output past the record's 1 MiB tail, output past
// the 5 MiB event budget. In-process through main() against a real backend on a
// real socket; compared by sha256. The receipt keeps its bounded tails.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startTestBackend, type TestBackend, workspaceOf } from "../backend/support.js";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

let home: string;
let backend: TestBackend;
let workspace: string;
beforeAll(async () => {
  home = makeHome("sbx-exact-");
  backend = await startTestBackend();
  workspace = await workspaceOf(backend);
  // Random bytes (not UTF-8) and 6 MiB of them (past the tail and the event budget).
  fs.writeFileSync(
    path.join(workspace, "small.bin"),
    Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 151 + 7) % 256)),
  );
  const big = Buffer.alloc(6 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
  fs.writeFileSync(path.join(workspace, "big.bin"), big);
});
afterAll(async () => {
  await backend.stop();
  removeHome(home);
});

async function sbx(argv: string[]) {
  const io = createBufferIO();
  const code = await main(argv, io, { SBX_HOME: home, SBX_API_URL: `unix:${backend.socketPath}` });
  return { code, out: io.stdoutBytes(), err: io.stderrText() };
}

describe("exec (blocking) prints bytes that are not UTF-8 as they are", () => {
  it("1000 bytes that are not UTF-8: stdout is byte for byte the file, by sha256", async () => {
    const want = fs.readFileSync(path.join(workspace, "small.bin"));
    const r = await sbx(["exec", "--", "cat", "small.bin"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out.length).toBe(want.length);
    expect(sha(r.out)).toBe(sha(want));
  });
});

describe.each([
  ["blocking", [] as string[]],
  ["--stream", ["--stream"]],
])("exec (%s) prints output past the record's tail and the event budget", (_mode, flags) => {
  it("6 MiB: stdout is byte for byte the file, by sha256; the receipt keeps its bounded tail", async () => {
    const want = fs.readFileSync(path.join(workspace, "big.bin"));
    const r = await sbx(["exec", ...flags, "--", "cat", "big.bin"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out.length).toBe(want.length);
    expect(sha(r.out)).toBe(sha(want));
    expect(r.err).not.toContain("not streamed");
    const list = await sbx(["receipts", "list", "--json", "--limit", "1"]);
    const doc = (JSON.parse(list.out.toString("utf8")) as ReceiptDocument[])[0]!;
    expect(doc.stdout_truncated).toBe(true);
    expect((doc.stdout ?? "").length).toBeLessThanOrEqual(1024 * 1024);
  });

  it("stderr too, past the event budget, with stdout beside it", async () => {
    const want = fs.readFileSync(path.join(workspace, "big.bin"));
    const io = createBufferIO();
    const code = await main(["exec", ...flags, "--shell", "cat big.bin >&2; cat small.bin"], io, {
      SBX_HOME: home,
      SBX_API_URL: `unix:${backend.socketPath}`,
    });
    expect(code).toBe(0);
    // stderr may carry sbx's own lines after the command's bytes; the bytes come first, whole.
    expect(sha(io.stderrBytes().subarray(0, want.length))).toBe(sha(want));
    expect(sha(io.stdoutBytes())).toBe(sha(fs.readFileSync(path.join(workspace, "small.bin"))));
  });
});
