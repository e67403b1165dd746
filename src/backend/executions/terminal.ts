// An execution run on a terminal, as the terminal route attaches to it
// (runs/terminal-source.ts): its transcript is its stdout output file, read by offset.

import type { ExecutionRecord } from "../../protocol/types.js";
import type { RunTerminal, TerminalSource } from "../runs/index.js";
import { outputSize, readOutputRange } from "./output-files.js";

export function executionTerminal(opts: {
  /** The execution's output files. */
  dir: string;
  record: () => ExecutionRecord | null;
  /** Its end is stored: its output file is complete. */
  logEnded: () => boolean;
  terminal: () => RunTerminal | null;
  watch: (listener: () => void) => () => void;
}): TerminalSource {
  return {
    read: (offset, limit) => ({ offset, data: readOutputRange(opts.dir, "stdout", offset, limit) ?? Buffer.alloc(0) }),
    size: () => outputSize(opts.dir, "stdout") ?? 0,
    watch: opts.watch,
    ended: () => {
      if (!opts.logEnded()) return null;
      const r = opts.record();
      if (r === null || r.outcome === "pending") return null;
      return {
        outcome: r.outcome,
        exit_code: r.exit_code,
        signal: r.signal,
        system_error: r.system_error,
        finished_at: r.finished_at,
      };
    },
    terminal: opts.terminal,
  };
}
