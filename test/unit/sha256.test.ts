// The SHA-256 seam (src/platform/sha256.ts): the same bytes give the same lowercase hex
// as node:crypto's createHash, on Node and, through Bun from node_modules running the
// seam's source as the release binary does, on Bun (its own SHA-256). A string is
// hashed as its UTF-8 bytes (the chain's entries, chain.ts), lone surrogates included
// (each becomes U+FFFD's bytes, as Buffer.from writes it).

import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/platform/sha256.js";
import { BUN } from "../support/binary.js";
import { REPO_ROOT } from "../support/cli.js";
import { itNeeding } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";

/** Inputs as hex, so that both runtimes build the very same bytes. */
function inputs(): string[] {
  const out = [
    "",
    Buffer.from("abc").toString("hex"),
    Buffer.from('{"data":{"é":"ünïcödé ✓ 🔗"},"prev":null,"receipt_id":"r","type":"request","v":1}').toString("hex"),
    Buffer.alloc(55, 0x61).toString("hex"), // 55, 56 and 64 bytes: SHA-256's padding boundaries
    Buffer.alloc(56, 0x61).toString("hex"),
    Buffer.alloc(64, 0x00).toString("hex"),
    Buffer.alloc(1 << 20, 0xff).toString("hex"),
  ];
  let seed = 22;
  for (let i = 0; i < 32; i++) {
    const b = Buffer.alloc((i * 37) % 700);
    for (let j = 0; j < b.length; j++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      b[j] = seed >>> 24;
    }
    out.push(b.toString("hex"));
  }
  return out;
}

/** Strings whose UTF-8 is not simply their code units: lone surrogates, astral characters. */
const TEXTS = ["", "abc", "a\ud800b\udfffc", "é✓🔗\u0000", '{"stdout":"\ud83d"}'];

/**
 * Run by Bun: each input's digest through the seam, of the bytes, of a view into the
 * middle of a larger buffer (as verify-fast.ts hashes a link's bytes) and of the bytes
 * read as UTF-8 text; each text's digest; and whether the seam took Bun's own SHA-256.
 */
const SCRIPT = `
import fs from "node:fs";
import { isBunRuntime } from ${JSON.stringify(path.join(REPO_ROOT, "src", "platform", "runtime.ts"))};
import { sha256Hex } from ${JSON.stringify(path.join(REPO_ROOT, "src", "platform", "sha256.ts"))};
const inputs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const digests = inputs.map((hex) => {
  const bytes = Buffer.from(hex, "hex");
  const padded = Buffer.concat([Buffer.from("xx\\n"), bytes, Buffer.from("\\nyy")]);
  return [sha256Hex(bytes), sha256Hex(padded.subarray(3, 3 + bytes.length)), sha256Hex(bytes.toString("utf8"))];
});
const texts = ${JSON.stringify(TEXTS)}.map((t) => sha256Hex(t));
console.log(JSON.stringify({ bun: isBunRuntime(), digests, texts }));
`;

const expected = (hex: string) => crypto.createHash("sha256").update(Buffer.from(hex, "hex")).digest("hex");
const expectedText = (text: string) => crypto.createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex");

describe("sha256Hex, the SHA-256 seam", () => {
  it("on Node gives node:crypto's digest, of a whole buffer and of a view into one", () => {
    for (const hex of inputs()) {
      const bytes = Buffer.from(hex, "hex");
      const padded = Buffer.concat([Buffer.from("xx\n"), bytes, Buffer.from("\ny")]);
      expect(sha256Hex(bytes)).toBe(expected(hex));
      expect(sha256Hex(new Uint8Array(padded.buffer, padded.byteOffset + 3, bytes.length))).toBe(expected(hex));
    }
    expect(sha256Hex(Buffer.from("abc"))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("on Node hashes a string as its UTF-8 bytes, lone surrogates as Buffer.from writes them", () => {
    for (const text of TEXTS) expect(sha256Hex(text)).toBe(expectedText(text));
    for (const hex of inputs()) {
      const text = Buffer.from(hex, "hex").toString("utf8");
      expect(sha256Hex(text)).toBe(expectedText(text));
    }
  });

  itNeeding("bun", "on Bun (as in the release binary) gives the same digests as node:crypto on Node", () => {
    const dir = tempDir("sbx-sha256-");
    const all = inputs();
    fs.writeFileSync(path.join(dir, "check.ts"), SCRIPT);
    fs.writeFileSync(path.join(dir, "inputs.json"), JSON.stringify(all));
    const ran = spawnSync(BUN, [path.join(dir, "check.ts"), path.join(dir, "inputs.json")], {
      encoding: "utf8",
      cwd: REPO_ROOT,
      maxBuffer: 16 << 20,
    });
    expect(ran.status, ran.stderr).toBe(0);
    const { bun, digests, texts } = JSON.parse(ran.stdout) as {
      bun: boolean;
      digests: [string, string, string][];
      texts: string[];
    };
    expect(bun).toBe(true);
    expect(digests).toEqual(
      all.map((hex) => [expected(hex), expected(hex), expectedText(Buffer.from(hex, "hex").toString("utf8"))]),
    );
    expect(texts).toEqual(TEXTS.map(expectedText));
  });
});
