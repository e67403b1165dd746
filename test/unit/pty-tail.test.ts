// A terminal's program's last output is never lost at its exit (src/platform/pty.ts): on
// Node, node-pty destroys its read stream 200 ms after the exit whatever is still unread;
// 8 MiB written just before the exit lost its last KiB there on a loaded machine.

import { expect } from "vitest";
import { spawnOnTerminal } from "../../src/platform/pty.js";
import { itNeeding } from "../support/requirements.js";

itNeeding(
  "pty",
  "8 MiB written just before the exit arrive whole, five times over",
  async () => {
    const size = 8 * 1024 * 1024;
    for (let round = 0; round < 5; round++) {
      const t = spawnOnTerminal({
        file: "sh",
        args: ["-c", `stty raw -echo; head -c ${size} /dev/zero | tr '\\0' x; printf END`],
        cwd: "/",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm" },
        cols: 80,
        rows: 24,
      });
      let bytes = 0;
      let tail = "";
      t.onData((chunk) => {
        bytes += chunk.length;
        tail = (tail + chunk.toString("latin1")).slice(-8);
      });
      await new Promise((resolve) => t.onExit(resolve));
      expect({ round, bytes, tail }).toEqual({ round, bytes: size + 3, tail: "xxxxxEND" });
    }
  },
  120_000,
);

// The master can read 0 bytes while its program runs on (libuv takes it as the end):
// about one short session in a hundred lost what it wrote after its input before the
// seam took that as no end (docs/drivers.md, "Terminals"). 150 sessions catch it
// most of the time when it comes back.
itNeeding(
  "pty",
  "what a program writes after reading its input arrives, 150 short sessions over",
  async () => {
    const lost: string[] = [];
    for (let round = 0; round < 150; round++) {
      const t = spawnOnTerminal({
        file: "sh",
        args: ["-c", "echo first; read line; echo second:$line"],
        cwd: "/",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm" },
        cols: 80,
        rows: 24,
      });
      let text = "";
      let typed = false;
      t.onData((chunk) => {
        text += chunk.toString("latin1");
        // Typed once the program runs (its first line), as a user would.
        if (!typed && text.includes("first")) {
          typed = true;
          t.write(Buffer.from(`in${round}\r`));
        }
      });
      await new Promise((resolve) => t.onExit(resolve));
      if (!text.includes(`second:in${round}`)) lost.push(JSON.stringify(text));
    }
    expect(lost).toEqual([]);
  },
  120_000,
);
