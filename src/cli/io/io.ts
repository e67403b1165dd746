// The one seam for the terminal: everything sbx prints or reads goes through an IO.
// It knows whether stdout/stderr are terminals, whether colour is on, and whether a
// person could answer a prompt. Tests use createBufferIO.

import { Chalk, type ChalkInstance } from "chalk";

export interface Sink {
  write(chunk: string | Uint8Array): unknown;
}

export interface IO {
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  readonly stdinIsTTY: boolean;
  readonly color: boolean;
  readonly quiet: boolean;
  readonly chalk: ChalkInstance;
  /** A line of data on stdout. */
  out(line: string): void;
  /** A line of progress, hint or warning on stderr (suppressed by --quiet unless it is an error). */
  info(line: string): void;
  /** A line on stderr that is always shown (errors, the in-doubt line). */
  err(line: string): void;
  /** Raw bytes to stdout / stderr (command output). */
  writeOut(chunk: string | Uint8Array): void;
  writeErr(chunk: string | Uint8Array): void;
  /** Everything on stdin. */
  readStdin(): Promise<Buffer>;
  /**
   * A secret: from a terminal, one line read with echo off (prompt on stderr);
   * from a pipe, everything on stdin. Never echoed.
   */
  readSecret(prompt: string): Promise<string>;
  /** Waits until everything written has been flushed (before exiting). */
  flush(): Promise<void>;
  /** A copy with colour and quietness decided by the global flags. */
  configure(opts: { color?: boolean; quiet?: boolean }): IO;
}

export interface IOStreams {
  stdout: Sink & { isTTY?: boolean };
  stderr: Sink & { isTTY?: boolean };
  stdin: AsyncIterable<Uint8Array | string> & {
    isTTY?: boolean;
    setRawMode?: (raw: boolean) => unknown;
    on?: (ev: "data", fn: (chunk: Buffer) => void) => unknown;
    off?: (ev: "data", fn: (chunk: Buffer) => void) => unknown;
    pause?: () => unknown;
    resume?: () => unknown;
  };
  env: NodeJS.ProcessEnv;
}

/** Reads one line from a terminal in raw mode, echoing nothing. */
function readHiddenLine(stdin: IOStreams["stdin"]): Promise<string> {
  return new Promise((resolve, reject) => {
    let line = "";
    const done = (err: Error | null) => {
      stdin.off?.("data", onData);
      stdin.setRawMode?.(false);
      stdin.pause?.();
      if (err) reject(err);
      else resolve(line);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n" || ch === "\u0004") return done(null);
        if (ch === "\u0003") return done(new Error("interrupted"));
        if (ch === "\u007f" || ch === "\b") line = line.slice(0, -1);
        else line += ch;
      }
    };
    stdin.setRawMode?.(true);
    stdin.on?.("data", onData);
    stdin.resume?.();
  });
}

/** Colour is on for a terminal, unless NO_COLOR or TERM=dumb say otherwise. */
export function colorWanted(isTTY: boolean, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  if (env.TERM === "dumb") return false;
  return isTTY;
}

function makeIO(s: IOStreams, color: boolean, quiet: boolean): IO {
  const chalk = new Chalk({ level: color ? 2 : 0 });
  const io: IO = {
    stdoutIsTTY: s.stdout.isTTY === true,
    stderrIsTTY: s.stderr.isTTY === true,
    stdinIsTTY: s.stdin.isTTY === true,
    color,
    quiet,
    chalk,
    out: (line) => {
      s.stdout.write(`${line}\n`);
    },
    info: (line) => {
      if (!quiet) s.stderr.write(`${line}\n`);
    },
    err: (line) => {
      s.stderr.write(`${line}\n`);
    },
    writeOut: (chunk) => {
      s.stdout.write(chunk);
    },
    writeErr: (chunk) => {
      s.stderr.write(chunk);
    },
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of s.stdin) chunks.push(typeof c === "string" ? Buffer.from(c) : Buffer.from(c));
      return Buffer.concat(chunks);
    },
    readSecret: async (prompt) => {
      if (s.stdin.isTTY === true && s.stdin.setRawMode) {
        s.stderr.write(prompt);
        const line = await readHiddenLine(s.stdin);
        s.stderr.write("\n");
        return line.trim();
      }
      return (await io.readStdin()).toString("utf8").trim();
    },
    flush: async () => {
      await Promise.all(
        [s.stdout, s.stderr].map(
          (w) =>
            new Promise<void>((resolve) => {
              // An empty write's callback runs once everything before it is flushed.
              const ok = (w as { write(c: string, cb: () => void): boolean }).write("", () => resolve());
              if (ok === undefined) resolve();
            }),
        ),
      );
    },
    configure: (opts) => makeIO(s, opts.color ?? color, opts.quiet ?? quiet),
  };
  return io;
}

export function createProcessIO(): IO {
  // A reader that went away (`sbx … | head -1`) is not an error of ours.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
    });
  }
  const streams: IOStreams = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
  return makeIO(streams, colorWanted(process.stdout.isTTY === true, process.env), false);
}

export interface BufferIO extends IO {
  stdoutText(): string;
  stderrText(): string;
  stdoutBytes(): Buffer;
}

/** An IO over buffers, for tests: not a TTY, no colour unless asked. */
export function createBufferIO(opts: { stdin?: Buffer | string; tty?: boolean; color?: boolean } = {}): BufferIO {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (into: Buffer[], tty: boolean) => ({
    isTTY: tty,
    write(chunk: string | Uint8Array, cb?: () => void) {
      into.push(Buffer.from(chunk));
      cb?.();
      return true;
    },
  });
  const input = opts.stdin === undefined ? Buffer.alloc(0) : Buffer.from(opts.stdin);
  const stdin = {
    isTTY: opts.tty === true,
    async *[Symbol.asyncIterator]() {
      if (input.length) yield input;
    },
  };
  const io = makeIO(
    { stdout: sink(out, opts.tty === true), stderr: sink(err, opts.tty === true), stdin, env: {} },
    opts.color ?? false,
    false,
  );
  return {
    ...io,
    stdoutText: () => Buffer.concat(out).toString("utf8"),
    stderrText: () => Buffer.concat(err).toString("utf8"),
    stdoutBytes: () => Buffer.concat(out),
  };
}
