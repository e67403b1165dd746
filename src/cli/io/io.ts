// The one seam for the terminal: everything sbx prints or reads goes through an IO.
// It knows whether stdout/stderr are terminals, whether colour is on, and whether a
// person could answer a prompt. Tests use createBufferIO.

import { type LocalTerminal, processTerminal } from "./local-terminal.js";
import type { Writable as WritableType } from "node:stream";
import { Chalk, type ChalkInstance } from "chalk";
import { isTerminal, stdioSink } from "../../platform/stdio.js";

export interface Sink {
  write(chunk: string | Uint8Array): unknown;
  /** 'drain' after a write answered false (Node streams); sinks that never say false need not. */
  once?(event: "drain" | "close", fn: () => void): unknown;
  off?(event: "drain" | "close", fn: () => void): unknown;
  /** Calls FN once the sink's reader has gone away (EPIPE); sinks that cannot tell need not. */
  onGone?(fn: () => void): void;
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
  /**
   * The terminal's width when stdout is one (tables and help fit it): COLUMNS when it
   * is set to a width, as most CLIs read it, else the terminal's own; null otherwise.
   */
  readonly stdoutColumns: number | null;
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
  /** The same for stderr. */
  writeErrPaced(chunk: Uint8Array): Promise<void>;
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
   * A secret: from a terminal, @inquirer/prompts' password prompt on stderr (nothing
   * echoed); from a pipe, everything on stdin. Never echoed.
   */
  readSecret(prompt: string): Promise<string>;
  /** The streams prompts use; only meaningful when canPrompt. */
  promptStreams(): PromptStreams;
  /** Waits until everything written has been flushed (before exiting). */
  flush(): Promise<void>;
  /** The user's terminal, to relay a sandbox's terminal to (local-terminal.ts); null when stdin is not one. */
  localTerminal(): LocalTerminal | null;
  /** Calls FN once whatever reads sbx's stdout has gone away (`sbx exec --stream … | head -1`). */
  onStdoutGone(fn: () => void): void;
  /**
   * A copy with colour, quietness and verbosity decided by the flags and settings:
   * `never` (--no-color) turns colour off everywhere; `always` turns it on unless
   * NO_COLOR says otherwise; `auto` keeps what the terminals decided.
   */
  configure(opts: { color?: ColorChoice; quiet?: boolean; verbose?: boolean }): IO;
}

export type ColorChoice = "auto" | "always" | "never";

export interface IOStreams {
  stdout: Sink & { isTTY?: boolean; columns?: number };
  stderr: Sink & { isTTY?: boolean };
  /** Stdin, or how to get it when it is first used (creating it costs a start-up; BENCHMARKS.md). */
  stdin: StdinStream | (() => StdinStream);
  /** Whether stdin is a terminal, known without creating the stream (else it is asked). */
  stdinIsTTY?: boolean;
  env: NodeJS.ProcessEnv;
  /** The user's terminal (processTerminal); none in test buffers. */
  localTerminal?: () => LocalTerminal | null;
}

type StdinStream = AsyncIterable<Uint8Array | string> & {
  isTTY?: boolean;
};

interface IOState {
  /** Colour on stdout / on stderr. */
  color: boolean;
  errColor: boolean;
  quiet: boolean;
  verbose: boolean;
  /** Whether spinners may be drawn at all (never into test buffers). */
  spinners: boolean;
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
  // node:stream only here, for a prompt: loading it is a cost of the binary's start-up (stdio.ts).
  const { Writable } = process.getBuiltinModule("node:stream");
  if (sink instanceof Writable) return sink as WritableType;
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      sink.write(chunk);
      cb();
    },
  });
  // Like process.stderr it is never closed: every prompt pipes into it and ends its pipe.
  return Object.assign(w, { isTTY: sink.isTTY === true, columns: 80, rows: 24, end: () => w });
}

/** Writes, resolving once the sink takes more (its 'drain' after a write answered false). */
function paced(sink: Sink, chunk: Uint8Array): Promise<void> {
  if (sink.write(chunk) !== false || !sink.once) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      sink.off?.("drain", done);
      sink.off?.("close", done);
      resolve();
    };
    sink.once?.("drain", done);
    sink.once?.("close", done);
  });
}

/** COLUMNS when it is a width (a whole number from 1), else what the terminal says; null when neither. */
export function terminalColumns(env: NodeJS.ProcessEnv, reported: number | undefined): number | null {
  const asked = env.COLUMNS?.trim();
  if (asked !== undefined && /^[1-9]\d{0,4}$/.test(asked)) return Number(asked);
  return reported !== undefined && reported > 0 ? reported : null;
}

function makeIO(s: IOStreams, st: IOState): IO {
  const chalk = new Chalk({ level: st.color ? 2 : 0 });
  const errChalk = new Chalk({ level: st.errColor ? 2 : 0 });
  const stderrIsTTY = s.stderr.isTTY === true;
  let stdinStream: StdinStream | null = null;
  const stdin = (): StdinStream => {
    stdinStream ??= typeof s.stdin === "function" ? s.stdin() : s.stdin;
    return stdinStream;
  };
  const stdinIsTTY = s.stdinIsTTY ?? stdin().isTTY === true;
  const animated = st.spinners && stderrIsTTY && st.errColor && !st.quiet;
  const io: IO = {
    stdoutIsTTY: s.stdout.isTTY === true,
    stdoutColumns: s.stdout.isTTY === true ? terminalColumns(s.env, s.stdout.columns) : null,
    stderrIsTTY,
    stdinIsTTY,
    color: st.color,
    quiet: st.quiet,
    chalk,
    errChalk,
    animated,
    canPrompt: stdinIsTTY && stderrIsTTY,
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
    writeOutPaced: (chunk) => paced(s.stdout, chunk),
    writeErrPaced: (chunk) => paced(s.stderr, chunk),
    async *stdinChunks() {
      for await (const c of stdin()) yield typeof c === "string" ? Buffer.from(c) : c;
    },
    progress: (text, opts) => (animated ? startSpinner(s.stderr, text, opts?.elapsed === true) : NO_PROGRESS),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of stdin()) chunks.push(typeof c === "string" ? Buffer.from(c) : Buffer.from(c));
      return Buffer.concat(chunks);
    },
    readSecret: async (prompt) => {
      const input = stdin();
      if (input.isTTY === true && s.stderr.isTTY === true) {
        // On a terminal: @inquirer/prompts' password prompt (on stderr), echoing nothing.
        const { password } = await import("@inquirer/prompts");
        const answer = await password({ message: prompt.replace(/:\s*$/, "") }, io.promptStreams());
        return answer.trim();
      }
      return (await io.readStdin()).toString("utf8").trim();
    },
    promptStreams: () => ({
      input: stdin() as unknown as NodeJS.ReadableStream,
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
    localTerminal: () => s.localTerminal?.() ?? null,
    onStdoutGone: (fn) => s.stdout.onGone?.(fn),
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
  const stdout = stdioSink(1);
  const stderr = stdioSink(2);
  const streams: IOStreams = {
    stdout,
    stderr,
    stdin: () => process.stdin,
    stdinIsTTY: isTerminal(0),
    env: process.env,
    localTerminal: processTerminal,
  };
  return makeIO(streams, {
    color: colorWanted(stdout.isTTY, process.env),
    errColor: colorWanted(stderr.isTTY, process.env),
    quiet: false,
    verbose: false,
    spinners: true,
  });
}

export interface BufferIO extends IO {
  /** Its reader goes away: what is written from now on is lost, as into a closed pipe. */
  closeStdout(): void;
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
    /** The terminal's width when tty (default 80). */
    columns?: number;
  } = {},
): BufferIO {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let stdoutGone = false;
  const goneWaiting: (() => void)[] = [];
  const sink = (into: Buffer[], tty: boolean) => ({
    isTTY: tty,
    ...(tty ? { columns: opts.columns ?? 80 } : {}),
    write(chunk: string | Uint8Array, cb?: () => void) {
      if (!(into === out && stdoutGone)) into.push(Buffer.from(chunk));
      cb?.();
      return true;
    },
  });
  const stdoutSink = {
    ...sink(out, opts.tty === true),
    onGone: (fn: () => void) => (stdoutGone ? fn() : goneWaiting.push(fn)),
  };
  const input = opts.stdin === undefined ? Buffer.alloc(0) : Buffer.from(opts.stdin);
  const stdin: StdinStream =
    opts.keys === undefined
      ? {
          isTTY: opts.tty === true,
          async *[Symbol.asyncIterator]() {
            if (input.length) yield input;
          },
        }
      : Object.assign(opts.keys as unknown as StdinStream, { isTTY: opts.tty === true });
  const env = opts.env ?? {};
  const color = opts.color ?? (opts.env === undefined ? false : colorWanted(opts.tty === true, env));
  const io = makeIO(
    { stdout: stdoutSink, stderr: sink(err, opts.tty === true), stdin, env },
    { color, errColor: color, quiet: false, verbose: false, spinners: false },
  );
  return {
    ...io,
    closeStdout: () => {
      if (stdoutGone) return;
      stdoutGone = true;
      for (const fn of goneWaiting.splice(0)) fn();
    },
    stdoutText: () => Buffer.concat(out).toString("utf8"),
    stderrText: () => Buffer.concat(err).toString("utf8"),
    stdoutBytes: () => Buffer.concat(out),
    stderrBytes: () => Buffer.concat(err),
  };
}
