// The outer terminal of the terminal e2e tests (test/support/outer-terminal.ts) reads all
// that its script wrote before it exited, however far behind its reader was: the
// script's last lines say sbx's exit status and that the session is over. node-pty's
// own reader took the terminal's hang-up at the script's exit for the end of its output
// and dropped what it had not read yet: all but the first 4 KiB here, every time, and
// on a loaded machine the last lines of short sessions too (e2e tests waited 30 s for
// "sbx-exit=" and "session-over" that had been written).

import fs from "node:fs";
import { expect } from "vitest";
import { OuterTerminal } from "../support/outer-terminal.js";
import { itNeeding } from "../support/requirements.js";

/** Whether the process has exited (a zombie nobody has reaped yet, or gone). */
function exited(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** Holds this thread, as a loaded machine would, until `done` (nothing of its event loop runs meanwhile). */
function holdThreadUntil(done: () => boolean, what: string): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const giveUpAt = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    Atomics.wait(pause, 0, 0, 5);
  }
}

itNeeding("pty", "what the script wrote is read whole when it exited while the reader was held", async () => {
  for (let round = 0; round < 3; round++) {
    const t = new OuterTerminal(`head -c 8000 /dev/zero | tr '\\0' x; echo; echo the-end-${round}`, {
      cwd: "/",
      env: { PATH: process.env.PATH },
    });
    holdThreadUntil(() => exited(t.pid), "the script to exit");
    await t.exited;
    const text = t.text();
    expect({ round, xs: text.split("x").length - 1, end: text.includes(`the-end-${round}`) }).toEqual({
      round,
      xs: 8000,
      end: true,
    });
  }
});
