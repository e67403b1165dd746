// What both directions of `sbx cp` share (./cp.ts in, ./cp-download.ts out): where a
// copy goes, what it answers, and the meter that counts, hashes and shows the bytes.

import type { createHash } from "node:crypto";
import { placeName } from "../../client/files.js";
import type { Context } from "../context.js";
import { formatBytes } from "../render/bytes.js";

export type Location =
  | { kind: "local"; path: string }
  | { kind: "stdio" }
  /** A sandbox's workspace, or (`volume`) the named volume `sandbox` (volume/NAME:PATH). */
  | { kind: "sandbox"; sandbox: string; path: string; volume?: boolean };

export interface CpOptions {
  source: Location;
  destination: Location;
  json: boolean;
  /** -L: a symlink named as the sandbox source is followed (where it stays in /workspace), not copied as itself. */
  followLink: boolean;
}

export interface CpResult {
  source: string;
  destination: string;
  type: "file" | "directory" | "symlink";
  /** A symlink's target, as it is (type symlink only). */
  target?: string;
  /** Bytes moved: a file's, the tar stream's, or a symlink's target. */
  bytes: number;
  /** sha256 of those bytes, as both sides saw them. */
  sha256: string;
  /** Entries of a tar stream; null for a file. */
  entries: number | null;
}

export function describe(l: Location): string {
  return l.kind === "stdio" ? "-" : l.kind === "sandbox" ? `${placeName(l)}:${l.path}` : l.path;
}

/** Counts and hashes the bytes going by, and shows them on a spinner while they do. */
export class TransferMeter {
  private bytes = 0;

  /** Bytes counted so far (sent or received). */
  get sent(): number {
    return this.bytes;
  }

  private lastUpdate = 0;
  private readonly progress;

  constructor(
    readonly ctx: Context,
    private readonly opts: CpOptions,
  ) {
    this.progress = ctx.io.progress(this.text());
  }

  async *count(hash: ReturnType<typeof createHash>, chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const chunk of chunks) {
      hash.update(chunk);
      this.bytes += chunk.length;
      const now = Date.now();
      if (now - this.lastUpdate > 100) {
        this.lastUpdate = now;
        this.progress.update(this.text());
      }
      yield chunk;
    }
  }

  stop(): void {
    this.progress.stop();
  }

  private text(): string {
    return `copying ${describe(this.opts.source)} to ${describe(this.opts.destination)}… ${formatBytes(this.bytes)}`;
  }
}
