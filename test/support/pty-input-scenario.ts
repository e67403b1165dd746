// Input back-pressure of the terminal seam (src/platform/pty.ts), as a scenario that runs
// under whichever runtime imports it: vitest on Node, and Bun (`bun THIS_FILE`), whose
// terminal takes every byte at once and says only by its drain callback when they have
// reached the terminal. 1 MiB is typed at a program that reads nothing yet: the seam must
// say it holds it (pendingInput), so that whoever feeds it stops reading its client;
// once the program reads, all of it arrives, once, and nothing is left pending.

import fs from "node:fs";
import path from "node:path";
import { spawnOnTerminal } from "../../src/platform/pty.js";

export const TYPED = 1024 * 1024;

export interface InputPressureResult {
  /** pendingInput() straight after the write. */
  pendingAfterWrite: number;
  /** What the program counted once it read. */
  counted: string;
  /** pendingInput() once the program had read it all. */
  pendingAtEnd: number;
}

/** `dir`: an empty directory of the caller's (the program waits for a file there before it reads). */
export async function inputPressure(dir: string): Promise<InputPressureResult> {
  const go = path.join(dir, "go");
  const t = spawnOnTerminal({
    file: "sh",
    args: ["-c", `stty raw -echo; echo ready; until [ -e '${go}' ]; do sleep 0.01; done; head -c ${TYPED} | wc -c`],
    cwd: "/",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm" },
    cols: 80,
    rows: 24,
  });
  let out = "";
  let wake: () => void = () => {};
  t.onData((chunk) => {
    out += chunk.toString("latin1");
    wake();
  });
  const ended = new Promise((resolve) => t.onExit(resolve));
  const until = async (what: () => boolean) => {
    while (!what()) await new Promise<void>((resolve) => (wake = resolve));
  };
  // Raw mode first (the program says so): the line discipline then passes bytes as they are.
  await until(() => out.includes("ready"));
  t.write(Buffer.alloc(TYPED, 0x61));
  const pendingAfterWrite = t.pendingInput();
  fs.writeFileSync(go, "");
  await until(() => /\d{4,}/.test(out.slice(out.indexOf("ready") + 5)));
  await ended;
  // Whatever tells the seam that its last bytes went (Bun's drain) has had its turn.
  for (let i = 0; i < 100 && t.pendingInput() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return {
    pendingAfterWrite,
    counted: /(\d{4,})/.exec(out.slice(out.indexOf("ready") + 5))![1]!,
    pendingAtEnd: t.pendingInput(),
  };
}

// Run by Bun (or node) directly, given the directory: the result as one JSON line.
if (process.argv[1] !== undefined && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  inputPressure(process.argv[2] ?? ".").then(
    (r) => console.log(JSON.stringify(r)),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
