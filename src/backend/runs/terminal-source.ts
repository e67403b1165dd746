// A run on a terminal as the terminal route sees it (docs/protocol.md, "Terminals"):
// its transcript (the terminal's output, kept by byte offset like any output: an
// execution's stdout file, a process's stdout log), the live terminal while the run
// lasts (input and window size), and how it ended. An execution and a supervised
// process each give one; the HTTP edge attaches WebSocket clients to it, reading the
// transcript from each client's own offset at that client's pace (a slow client
// costs the backend no memory: what it has not read yet is on disk).

import type { Writable } from "node:stream";
import type { TerminalSize } from "../../platform/pty.js";

/** A run on a terminal: what is typed at it, and its window size. */
export interface RunTerminal {
  /** Bytes typed at the terminal; fills up (writableLength, 'drain') while the program reads nothing. */
  readonly input: Writable;
  resize(size: TerminalSize): void;
}

/** How the run ended, as the route's `exit` message says it. */
export interface TerminalEnd {
  outcome: string;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  finished_at: string | null;
}

export interface TranscriptRead {
  /** Where the bytes start: later than asked when what was asked is no longer kept. */
  offset: number;
  data: Buffer;
}

export interface TerminalSource {
  /** Up to `limit` bytes of the transcript from `offset`. */
  read(offset: number, limit: number): TranscriptRead;
  /** The transcript's length so far (the offset its next byte will have). */
  size(): number;
  /** Calls `listener` on new output and at the end; returns how to stop. */
  watch(listener: () => void): () => void;
  /** How it ended, once it did and its transcript is complete; null while it runs. */
  ended(): TerminalEnd | null;
  /** The live terminal, or null once the run ended (or between two runs of a process). */
  terminal(): RunTerminal | null;
}
