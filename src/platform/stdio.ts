// The runtime seam for stdout and stderr: the sinks sbx writes to, and letting them
// drain before the process exits (pipes are asynchronous).
//
// Node: process.stdout and process.stderr. An empty write's callback runs once
// everything before it was flushed.
// Bun (the release binary): setting up its stream layer costs a start-up of its own
// (about 8 ms, a third of `sbx --version`; BENCHMARKS.md), so output that goes to a
// pipe or a file is written straight to the descriptor (fs.writeSync, which the
// descriptor's blocking mode makes whole); a terminal gets the stream (spinners and
// prompts need one). Where a descriptor refuses a blocking write (EAGAIN: it was
// left non-blocking), the stream takes over. Bun calls an empty write's callback
// while a large write to a pipe is still pending, and exit then cuts the output at
// 128 KiB: there, ending the stream is what waits for the data to be written.
//
// Whether a descriptor is a terminal is asked here too (isTerminal): Bun's node:tty
// module sets up its stream classes when it is loaded (node:stream, fs streams: about
// 2.5 ms of the binary's start, BENCHMARKS.md), so the binary asks the same native
// check node:tty's isatty calls, through Node's `tty_wrap` binding, which Bun keeps.

import fs from "node:fs";
import { isBunRuntime } from "./runtime.js";

interface TtyBinding {
  isTTY(fd: number): boolean;
}

/** The native isatty, without loading node:tty (Bun); null where the binding is not there. */
function ttyBinding(): TtyBinding | null {
  try {
    const binding = (process as unknown as { binding(name: string): Partial<TtyBinding> }).binding("tty_wrap");
    return typeof binding.isTTY === "function" ? (binding as TtyBinding) : null;
  } catch {
    return null;
  }
}

let isattyOf: ((fd: number) => boolean) | null = null;

/** Whether the descriptor is a terminal (isatty(3)). */
export function isTerminal(fd: number): boolean {
  if (isattyOf === null) {
    const binding = isBunRuntime() ? ttyBinding() : null;
    isattyOf = binding ? (n) => binding.isTTY(n) : process.getBuiltinModule("node:tty").isatty;
  }
  return isattyOf(fd);
}

/** What the CLI's IO writes to (the same shape as a Node writable stream's, as far as it is used). */
export interface StdioSink {
  readonly isTTY: boolean;
  write(chunk: string | Uint8Array): boolean;
  once(event: "drain" | "close", fn: () => void): unknown;
  /** Calls FN once the descriptor's reader has gone away (EPIPE: `sbx … | head -1`). */
  onGone(fn: () => void): void;
}

const streamsInUse = new Set<NodeJS.WriteStream>();

/** Per descriptor: whether its reader went away, and who wants to know. */
const goneState = {
  1: { gone: false, waiting: [] as (() => void)[] },
  2: { gone: false, waiting: [] as (() => void)[] },
};

function markGone(fd: 1 | 2): void {
  const state = goneState[fd];
  if (state.gone) return;
  state.gone = true;
  for (const fn of state.waiting.splice(0)) fn();
}

function onGone(fd: 1 | 2, fn: () => void): void {
  if (goneState[fd].gone) fn();
  else goneState[fd].waiting.push(fn);
}

function processStream(fd: 1 | 2): NodeJS.WriteStream {
  const stream = fd === 1 ? process.stdout : process.stderr;
  if (!streamsInUse.has(stream)) {
    streamsInUse.add(stream);
    // A reader that went away (`sbx … | head -1`) is not an error of ours: it is said to
    // whoever follows output (exec --stream stops following).
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
      markGone(fd);
    });
  }
  return stream;
}

/** process.stdout or process.stderr as a sink. */
function streamSink(fd: 1 | 2): StdioSink {
  const stream = processStream(fd);
  return Object.assign(stream, { onGone: (fn: () => void) => onGone(fd, fn) });
}

/** Writes straight to the descriptor; the stream once the descriptor will not block. */
function descriptorSink(fd: 1 | 2): StdioSink {
  let stream: NodeJS.WriteStream | null = null;
  let gone = false;
  return {
    isTTY: false,
    write(chunk) {
      if (stream) return stream.write(chunk);
      if (gone) return true;
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      let at = 0;
      try {
        while (at < bytes.length) at += fs.writeSync(fd, bytes, at, bytes.length - at);
        return true;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "EPIPE") {
          gone = true;
          markGone(fd);
          return true;
        }
        if (code !== "EAGAIN") throw err;
        stream = processStream(fd);
        return stream.write(bytes.subarray(at));
      }
    },
    once(event, fn) {
      if (stream) stream.once(event, fn);
      else fn();
      return this;
    },
    onGone: (fn) => onGone(fd, fn),
  };
}

/** stdout (1) or stderr (2), as the CLI writes to it. */
export function stdioSink(fd: 1 | 2): StdioSink {
  if (isBunRuntime() && !isTerminal(fd)) return descriptorSink(fd);
  return streamSink(fd);
}

function drained(stream: NodeJS.WriteStream, end: boolean): Promise<void> {
  return new Promise((resolve) => {
    try {
      if (end) stream.end(() => resolve());
      else stream.write("", () => resolve());
    } catch {
      resolve();
    }
  });
}

/** Resolves once everything written to stdout and stderr has reached them. */
export async function flushStdio(): Promise<void> {
  const end = isBunRuntime();
  // Only the streams written to: asking Bun for process.stdout creates it (stdioSink).
  for (const stream of streamsInUse) await drained(stream, end);
}
