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
  /** Waits until everything written has been flushed (before exiting). */
  flush(): Promise<void>;
  /** A copy with colour and quietness decided by the global flags. */
  configure(opts: { color?: boolean; quiet?: boolean }): IO;
}

export interface IOStreams {
  stdout: Sink & { isTTY?: boolean };
  stderr: Sink & { isTTY?: boolean };
  stdin: AsyncIterable<Uint8Array | string> & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
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
