// The one seam for the terminal: everything sbx prints or reads goes through an IO.
// It knows whether stdout/stderr are terminals, whether colour is on, and whether a
// person could answer a prompt. Tests use createBufferIO.

import { Writable } from "node:stream";
import { Chalk, type ChalkInstance } from "chalk";

export interface Sink {
  write(chunk: string | Uint8Array): unknown;
  /** 'drain' after a write answered false (Node streams); sinks that never say false need not. */
  once?(event: "drain" | "close", fn: () => void): unknown;
}

/** A spinner on stderr while sbx waits; a no-op where it cannot be drawn. */
export interface Progress {
  /** Replaces the text (the elapsed time, when asked for, is kept after it). */
  update(text: string): void;
  /** Clears the spinner line. Safe to call more than once. */
  stop(): void;
}

/** What @inquirer/prompts reads keys from and draws on (stderr, so stdout stays data). */
export interface PromptStreams {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
}

export interface IO {
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  readonly stdinIsTTY: boolean;
  /** Colour on stdout. */
  readonly color: boolean;
  readonly quiet: boolean;
  /** Colours for stdout. */
  readonly chalk: ChalkInstance;
  /** Colours for lines on stderr: on only when stderr is a terminal (or colour is forced). */
  readonly errChalk: ChalkInstance;
  /** Spinners are drawn: stderr is a terminal, colour is on, not --quiet. */
  readonly animated: boolean;
  /** A person could answer a prompt: stdin and stderr are terminals. */
  readonly canPrompt: boolean;
  /** A line of data on stdout. */
  out(line: string): void;
  /** A line of progress, hint or warning on stderr (suppressed by --quiet unless it is an error). */
  info(line: string): void;
  /** A line on stderr shown only with --verbose (never a secret). */
  verbose(line: string): void;
  /** A line on stderr that is always shown (errors, the in-doubt line). */
  err(line: string): void;
  /** Raw bytes to stdout / stderr (command output). */
  writeOut(chunk: string | Uint8Array): void;
  writeErr(chunk: string | Uint8Array): void;
  /** Raw bytes to stdout, resolving once stdout takes more: for streams of any size. */
  writeOutPaced(chunk: Uint8Array): Promise<void>;
  /** Stdin as it arrives (a tar stream, say), without holding it all. */
  stdinChunks(): AsyncIterable<Uint8Array>;
  /**
   * A spinner on stderr with TEXT (and, with `elapsed`, the seconds since it started)
   * until stop(); nothing at all when not `animated`. Stop it before printing results.
   */
  progress(text: string, opts?: { elapsed?: boolean }): Progress;
  /** Everything on stdin. */
  readStdin(): Promise<Buffer>;
  /**
   * A secret: from a terminal, one line read with echo off (prompt on stderr);
   * from a pipe, everything on stdin. Never echoed.
   */
  readSecret(prompt: string): Promise<string>;
  /** The streams prompts use; only meaningful when canPrompt. */
  promptStreams(): PromptStreams;
  /** Waits until everything written has been flushed (before exiting). */
  flush(): Promise<void>;
  /**
   * A copy with colour, quietness and verbosity decided by the flags and settings:
   * `never` (--no-color) turns colour off everywhere; `always` turns it on unless
   * NO_COLOR says otherwise; `auto` keeps what the terminals decided.
   */
  configure(opts: { color?: ColorChoice; quiet?: boolean; verbose?: boolean }): IO;
}

export type ColorChoice = "auto" | "always" | "never";

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

interface IOState {
  /** Colour on stdout / on stderr. */
  color: boolean;
  errColor: boolean;
  quiet: boolean;
  verbose: boolean;
  /** Whether spinners may be drawn at all (never into test buffers). */
  spinners: boolean;
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

const HIDE_CURSOR = "\u001b[?25l";
const SHOW_CURSOR = "\u001b[?25h";

const NO_PROGRESS: Progress = { update: () => undefined, stop: () => undefined };

/**
 * An ora spinner on stderr. ora is imported on first use, so commands that never
 * wait do not pay for it at start-up; a wait shorter than the import shows nothing.
 */
function startSpinner(stderr: IOStreams["stderr"], text: string, elapsed: boolean): Progress {
  const started = Date.now();
  let current = text;
  let stopped = false;
  let spinner: { text: string; stop(): unknown } | null = null;
  let ticker: NodeJS.Timeout | null = null;
  const render = () => {
    const s = Math.floor((Date.now() - started) / 1000);
    return elapsed && s >= 1 ? `${current} ${s}s` : current;
  };
  import("ora")
    .then(({ default: ora }) => {
      if (stopped) return;
      spinner = ora({
        text: render(),
        stream: stderr as unknown as NodeJS.WritableStream,
        isEnabled: true,
        // ora would otherwise put stdin in raw mode, stealing `exec --stdin` input and Ctrl-C.
        discardStdin: false,
        // ora's own cursor hiding loads signal-exit, which re-raises SIGINT once main's
        // one-shot handler has run: sbx would die on Ctrl-C before printing the in-doubt
        // line. The cursor is hidden here instead and shown again in stop().
        hideCursor: false,
        color: "cyan",
      }).start();
      stderr.write(HIDE_CURSOR);
      if (elapsed) {
        ticker = setInterval(() => {
          if (spinner) spinner.text = render();
        }, 1000);
        ticker.unref();
      }
    })
    .catch(() => undefined);
  return {
    update(t) {
      current = t;
      if (spinner) spinner.text = render();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      if (ticker) clearInterval(ticker);
      if (spinner) {
        spinner.stop();
        stderr.write(SHOW_CURSOR);
      }
    },
  };
}

/** A Writable over a plain sink, for prompts drawn into a test buffer. */
function writableOver(sink: Sink & { isTTY?: boolean }): NodeJS.WritableStream {
  if (sink instanceof Writable) return sink;
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      sink.write(chunk);
      cb();
    },
  });
  // Like process.stderr it is never closed: every prompt pipes into it and ends its pipe.
  return Object.assign(w, { isTTY: sink.isTTY === true, columns: 80, rows: 24, end: () => w });
}

function makeIO(s: IOStreams, st: IOState): IO {
  const chalk = new Chalk({ level: st.color ? 2 : 0 });
  const errChalk = new Chalk({ level: st.errColor ? 2 : 0 });
  const stderrIsTTY = s.stderr.isTTY === true;
  const animated = st.spinners && stderrIsTTY && st.errColor && !st.quiet;
  const io: IO = {
    stdoutIsTTY: s.stdout.isTTY === true,
    stderrIsTTY,
    stdinIsTTY: s.stdin.isTTY === true,
    color: st.color,
    quiet: st.quiet,
    chalk,
    errChalk,
    animated,
    canPrompt: s.stdin.isTTY === true && stderrIsTTY,
    out: (line) => {
      s.stdout.write(`${line}\n`);
    },
    info: (line) => {
      if (!st.quiet) s.stderr.write(`${line}\n`);
    },
    verbose: (line) => {
      if (st.verbose) s.stderr.write(`${errChalk.dim(line)}\n`);
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
    writeOutPaced: (chunk) => {
      if (s.stdout.write(chunk) !== false || !s.stdout.once) return Promise.resolve();
      return new Promise((resolve) => {
        s.stdout.once?.("drain", resolve);
        s.stdout.once?.("close", resolve);
      });
    },
    async *stdinChunks() {
      for await (const c of s.stdin) yield typeof c === "string" ? Buffer.from(c) : c;
    },
    progress: (text, opts) => (animated ? startSpinner(s.stderr, text, opts?.elapsed === true) : NO_PROGRESS),
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
    promptStreams: () => ({
      input: s.stdin as unknown as NodeJS.ReadableStream,
      output: writableOver(s.stderr),
    }),
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
    configure: (opts) => {
      const noColorEnv = s.env.NO_COLOR !== undefined && s.env.NO_COLOR !== "";
      const pick = (auto: boolean) => (opts.color === "never" ? false : opts.color === "always" ? !noColorEnv : auto);
      return makeIO(s, {
        ...st,
        color: pick(st.color),
        errColor: pick(st.errColor),
        quiet: opts.quiet ?? st.quiet,
        verbose: opts.verbose ?? st.verbose,
      });
    },
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
  return makeIO(streams, {
    color: colorWanted(process.stdout.isTTY === true, process.env),
    errColor: colorWanted(process.stderr.isTTY === true, process.env),
    quiet: false,
    verbose: false,
    spinners: true,
  });
}

export interface BufferIO extends IO {
  stdoutText(): string;
  stderrText(): string;
  stdoutBytes(): Buffer;
  stderrBytes(): Buffer;
}

/**
 * An IO over buffers, for tests: not a TTY, no colour unless asked, never a spinner.
 * `keys`, a readable stream (e.g. a PassThrough), stands in for the terminal that
 * prompts read; with `tty` it makes canPrompt true. With `env`, colour is decided from
 * it (NO_COLOR, FORCE_COLOR, TERM) as for the process's own streams, unless `color` says.
 */
export function createBufferIO(
  opts: {
    stdin?: Buffer | string;
    tty?: boolean;
    color?: boolean;
    keys?: NodeJS.ReadableStream;
    env?: NodeJS.ProcessEnv;
  } = {},
): BufferIO {
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
  const stdin: IOStreams["stdin"] =
    opts.keys === undefined
      ? {
          isTTY: opts.tty === true,
          async *[Symbol.asyncIterator]() {
            if (input.length) yield input;
          },
        }
      : Object.assign(opts.keys as unknown as IOStreams["stdin"], { isTTY: opts.tty === true });
  const env = opts.env ?? {};
  const color = opts.color ?? (opts.env === undefined ? false : colorWanted(opts.tty === true, env));
  const io = makeIO(
    { stdout: sink(out, opts.tty === true), stderr: sink(err, opts.tty === true), stdin, env },
    { color, errColor: color, quiet: false, verbose: false, spinners: false },
  );
  return {
    ...io,
    stdoutText: () => Buffer.concat(out).toString("utf8"),
    stderrText: () => Buffer.concat(err).toString("utf8"),
    stdoutBytes: () => Buffer.concat(out),
    stderrBytes: () => Buffer.concat(err),
  };
}
