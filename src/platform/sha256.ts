// The runtime seam for SHA-256 where many small inputs are hashed one call each (verify's
// fast path: a link per chain position, a digest per receipt body). Same bytes in, same
// lowercase hex out on both runtimes (test/unit/sha256.test.ts compares them): on Node,
// node:crypto's one-shot hash; in the release binary, Bun's own SHA-256, which skips
// node:crypto's layer over it (about a sixth less time per digest of a link's size,
// BENCHMARKS.md, "The receipt chain").

// A string is hashed as its UTF-8 bytes. node:crypto is loaded only on Node: in the
// binary, loading it is a cost of every command's start (BENCHMARKS.md).

import { isBunRuntime } from "./runtime.js";

type Sha256Hex = (data: Uint8Array | string) => string;

interface BunSha256 {
  SHA256: { hash(data: Uint8Array | string, encoding: "hex"): string };
}

function nodeSha256Hex(): Sha256Hex {
  const crypto = process.getBuiltinModule("node:crypto");
  return typeof crypto.hash === "function"
    ? (data) => crypto.hash("sha256", data, "hex")
    : (data) => crypto.createHash("sha256").update(data).digest("hex");
}

function bunSha256Hex(): Sha256Hex {
  const { SHA256 } = (globalThis as unknown as { Bun: BunSha256 }).Bun;
  return (data) => SHA256.hash(data, "hex");
}

/** Lowercase hex SHA-256 of the bytes (of a string: of its UTF-8 bytes). */
export const sha256Hex: Sha256Hex = isBunRuntime() ? bunSha256Hex() : nodeSha256Hex();
