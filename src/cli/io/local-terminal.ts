// The user's own terminal while sbx relays a sandbox's terminal to it (sbx shell, exec
// -it, attach): raw mode while attached, and the terminal's mode as it was restored on
// every way out — the session's end, an error, a dropped backend, SIGTERM, SIGHUP or
// SIGQUIT to sbx, and the process's exit as a last resort. Part of the CLI's one seam
// for the terminal (STYLE.md): nothing else touches stdin's mode.

import { isTerminal } from "../../platform/stdio.js";

export interface TerminalSize {
  cols: number;
  rows: number;
}

/** Signals that end an attached session: the mode is restored and the session says which. */
export const ENDING_SIGNALS = ["SIGTERM", "SIGHUP", "SIGQUIT"] as const;
export type EndingSignal = (typeof ENDING_SIGNALS)[number];

export interface LocalTerminal {
  /** The window size (stdout's, else a terminal's usual 80×24). */
  size(): TerminalSize;
  /** Raw mode: every key reaches the sandbox as typed (Ctrl-C included). */
  enterRaw(): void;
  /** The mode as it was before enterRaw (idempotent). */
  restore(): void;
  /** Keys as typed; returns how to stop. */
  onInput(listener: (bytes: Buffer) => void): () => void;
  /** The window was resized. */
  onResize(listener: () => void): () => void;
  /** SIGTERM, SIGHUP or SIGQUIT to sbx while attached (the mode is restored first). */
  onSignal(listener: (signal: EndingSignal) => void): () => void;
  /** Output of the sandbox's terminal, as is; resolves once stdout takes more. */
  write(bytes: Buffer): Promise<void>;
}

/** sbx's own terminal, or null when stdin is not one. */
export function processTerminal(): LocalTerminal | null {
  if (!isTerminal(0)) return null;
  const stdin = process.stdin;
  const stdout = process.stdout;
  let raw = false;
  const restore = () => {
    if (!raw) return;
    raw = false;
    try {
      stdin.setRawMode(false);
    } catch {
      // The terminal is gone (SIGHUP): there is no mode left to restore.
    }
  };
  // The last resort: whatever path leads to exit, the mode goes back first.
  process.once("exit", restore);
  return {
    size: () => {
      const cols = stdout.isTTY ? stdout.columns : 0;
      const rows = stdout.isTTY ? stdout.rows : 0;
      return { cols: cols > 0 ? cols : 80, rows: rows > 0 ? rows : 24 };
    },
    enterRaw: () => {
      if (raw) return;
      stdin.setRawMode(true);
      raw = true;
      // The runtime's raw mode keeps output processing (a newline written becomes CR LF);
      // the sandbox's terminal did that already, so ours passes bytes through as they are.
      // Restored with the rest of the mode (setRawMode(false) puts back what it found).
      // node:child_process only here: every command's start would load it (src/platform/stdio.ts).
      process.getBuiltinModule("node:child_process").spawnSync("stty", ["-opost"], { stdio: [0, "ignore", "ignore"] });
    },
    restore,
    onInput: (listener) => {
      const on = (chunk: Buffer | string) => listener(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
      stdin.on("data", on);
      stdin.resume();
      return () => {
        stdin.off("data", on);
        stdin.pause();
      };
    },
    onResize: (listener) => {
      // SIGWINCH reaches a process whose stdout is not a terminal too.
      process.on("SIGWINCH", listener);
      return () => {
        process.off("SIGWINCH", listener);
      };
    },
    onSignal: (listener) => {
      const handlers = ENDING_SIGNALS.map((signal) => {
        const h = () => {
          restore();
          listener(signal);
        };
        process.on(signal, h);
        return () => process.off(signal, h);
      });
      return () => {
        for (const off of handlers) off();
      };
    },
    write: (bytes) =>
      new Promise<void>((resolve) => {
        if (stdout.write(bytes)) resolve();
        else stdout.once("drain", () => resolve());
      }),
  };
}
