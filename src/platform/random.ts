// The runtime seam for random ids and keys. Bun's Web Crypto global is part of the
// runtime (node:crypto costs the binary's start about 4 ms of CPU; BENCHMARKS.md); on
// Node the global loads Node's webcrypto layer on first use, while node:crypto is the
// module Node's own crypto is (and the SHA-256 seam loads it anyway).

import { isBunRuntime } from "./runtime.js";

interface RandomSource {
  randomUUID(): string;
  randomBytes(n: number): Buffer;
}

function bunRandom(): RandomSource {
  const webCrypto = globalThis.crypto;
  return {
    randomUUID: () => webCrypto.randomUUID(),
    randomBytes: (n) => Buffer.from(webCrypto.getRandomValues(new Uint8Array(n))),
  };
}

function nodeRandom(): RandomSource {
  const crypto = process.getBuiltinModule("node:crypto");
  return { randomUUID: () => crypto.randomUUID(), randomBytes: (n) => crypto.randomBytes(n) };
}

let source: RandomSource | null = null;
const random = (): RandomSource => {
  source ??= isBunRuntime() ? bunRandom() : nodeRandom();
  return source;
};

/** A random version 4 UUID. */
export function randomUUID(): string {
  return random().randomUUID();
}

/** `n` cryptographically random bytes. */
export function randomBytes(n: number): Buffer {
  return random().randomBytes(n);
}
