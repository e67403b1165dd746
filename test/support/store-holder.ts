// A second process holding a receipt store's write lock, as a person's
// `sqlite3 receipts.db 'BEGIN IMMEDIATE; …'` session would, until released.

import { spawn } from "node:child_process";

export interface StoreHolder {
  /** Commits and quits; resolves once the process is gone (the lock with it). */
  release(): Promise<void>;
}

/** Starts `sqlite3 FILE`, takes the write lock, and resolves once it holds it. */
export async function holdStoreLock(file: string): Promise<StoreHolder> {
  const child = spawn("sqlite3", [file], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const gone = new Promise<void>((resolve) => child.once("close", () => resolve()));
  child.stdin.write("PRAGMA busy_timeout = 30000;\nBEGIN IMMEDIATE;\nSELECT 'holding';\n");
  const deadline = Date.now() + 30_000;
  while (!out.includes("holding")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`sqlite3 did not take the lock: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    release: async () => {
      if (child.exitCode === null) child.stdin.end("COMMIT;\n.quit\n");
      await gone;
    },
  };
}
