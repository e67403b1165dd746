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
