// The runtime seam for pseudo-terminals (docs/drivers.md, "Terminals"). The release
// binary compiled with Bun uses Bun's own terminal (`Bun.spawn({ terminal })`); on Node
// it is node-pty's native addon (pty.node, from node-pty 1.1.0, pinned exactly: its
// `fork` and `resize` are called directly, as node-pty's own lib/unixTerminal.js calls
// them), with the master read and written here. A program started here is the leader of
// a new session whose controlling terminal is a new pseudo-terminal opened from the
// /dev/ptmx of the process that calls this (forkpty) — never the user's own terminal.
// Nothing else in the code base opens a PTY.
//
// Inside a bwrap sandbox the caller is the sandbox's init (src/sandbox-init/init.ts), so
// the terminal comes from the sandbox's own devpts. There, on Node, node-pty's package
// is not reachable: only its addon is, passed in by descriptor (useTerminalAddon). This
// module imports nothing but Node's built-ins and runtime.ts, so that the init's bundle
// can hold it.

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import tty from "node:tty";
import { isBunRuntime } from "./runtime.js";

export interface TerminalSize {
  cols: number;
  rows: number;
}

export interface TerminalSpawn extends TerminalSize {
  file: string;
  args: string[];
  cwd: string;
  /** The complete environment (TERM included when wanted). */
  env: Record<string, string>;
}

/** How a terminal's program ended: an exit code, or the signal that killed it. */
export interface TerminalExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A program on a pseudo-terminal of its own: the master side, held by this process. */
export interface TerminalProcess {
  readonly pid: number;
  /** Every chunk the program writes to its terminal (stdout and stderr are one stream here). */
  onData(listener: (chunk: Buffer) => void): void;
  /** Once, when the program ended and what it wrote was read. */
  onExit(listener: (exit: TerminalExit) => void): void;
  /** Bytes typed at the terminal (its line discipline echoes and edits them as a keyboard's). */
  write(data: Buffer): void;
  /** Bytes handed to write() and not yet taken by the terminal (a program that reads nothing fills it). */
  pendingInput(): number;
  /** The window size; the program's foreground process group gets SIGWINCH. */
  resize(size: TerminalSize): void;
  /** Closes the master side: the session gets SIGHUP, as when a terminal window closes. */
  close(): void;
}

/** The terminal seam cannot be used on this installation (node-pty's addon missing or not built). */
export class TerminalUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TerminalUnavailable";
  }
}

const require = createRequire(import.meta.url);

/** Starts `file` on a new pseudo-terminal. Throws TerminalUnavailable, or the spawn's own error (ENOENT, …). */
export function spawnOnTerminal(spec: TerminalSpawn): TerminalProcess {
  return isBunRuntime() ? spawnBun(spec) : spawnAddon(spec);
}

/** node-pty 1.1.0's native binding on Linux, as its lib/unixTerminal.js calls it. */
interface PtyBinding {
  fork(
    file: string,
    args: string[],
    env: string[],
    cwd: string,
    cols: number,
    rows: number,
    uid: number,
    gid: number,
    utf8: boolean,
    helperPath: string,
    onExit: (code: number, signal: number) => void,
  ): { fd: number; pid: number; pty: string };
  resize(fd: number, cols: number, rows: number): void;
}

/** Where node-pty's addon is loaded from in this process (the init's descriptor), or null: this installation's. */
let addonFile: string | null = null;
let binding: PtyBinding | null = null;

/**
 * From now on terminals are made by node-pty's native addon at `file` (a sandbox's init
 * on Node: /proc/self/fd/N), loaded at the first one. No effect on Bun.
 */
export function useTerminalAddon(file: string): void {
  addonFile = file;
}

function addonBinding(): PtyBinding {
  if (binding !== null) return binding;
  const file = addonFile ?? terminalAddonFile() ?? "";
  const mod = { exports: {} as unknown };
  try {
    process.dlopen(mod, file);
  } catch (err) {
    throw new TerminalUnavailable(`node-pty's native addon cannot be loaded here: ${(err as Error).message}`);
  }
  binding = mod.exports as PtyBinding;
  return binding;
}

/**
 * node-pty's native addon on this installation (the file a sandbox's init is given by
 * descriptor, to open its terminals inside the sandbox); null on Bun, which has its
 * own. `given`: that file instead of the installed one (tests name one that is not
 * there). Throws TerminalUnavailable when node-pty or its addon is not there.
 */
let foundAddon: string | null = null;

export function terminalAddonFile(given?: string): string | null {
  if (isBunRuntime()) return null;
  if (given !== undefined) {
    if (!fs.existsSync(given)) {
      throw new TerminalUnavailable(`terminals need node-pty's native addon on Node, and ${given} is not there`);
    }
    return given;
  }
  if (foundAddon !== null) return foundAddon;
  let dir: string;
  try {
    dir = path.dirname(path.dirname(require.resolve("node-pty")));
  } catch (err) {
    throw new TerminalUnavailable(
      `terminals need node-pty on Node, and it is not installed: ${(err as Error).message}`,
    );
  }
  // Where node-pty's own loader looks (lib/utils.js loadNativeModule).
  const candidates = ["build/Release", "build/Debug", `prebuilds/${process.platform}-${process.arch}`].map((d) =>
    path.join(dir, d, "pty.node"),
  );
  const found = candidates.find((file) => fs.existsSync(file));
  if (found === undefined) {
    throw new TerminalUnavailable(
      "terminals need node-pty's native addon on Node, and it is not built (reinstall with npm ci; python3, make and g++ build it)",
    );
  }
  foundAddon = found;
  return found;
}

/** Why terminals cannot be had here, or null when they can (loads the Node addon once). */
export function terminalSupport(): string | null {
  if (isBunRuntime()) return null;
  try {
    addonBinding();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * What a terminal's program writes, handed to the listeners; what comes before the first
 * listener is kept for it (a program may write as soon as it starts).
 */
function outputFanout(): { hand(chunk: Buffer): void; onData(listener: (chunk: Buffer) => void): void } {
  const listeners: Array<(chunk: Buffer) => void> = [];
  const early: Buffer[] = [];
  return {
    hand: (chunk) => {
      if (listeners.length === 0) early.push(chunk);
      for (const l of listeners) l(chunk);
    },
    onData: (listener) => {
      listeners.push(listener);
      for (const b of early.splice(0)) listener(b);
    },
  };
}

/** How long a program's terminal may stay open after it exited, for what it wrote (a job it left holds it). */
const AFTER_EXIT_MS = 200;

/**
 * A terminal made by node-pty's addon directly (inside a sandbox): its master read as a
 * tty stream, written through a queue of our own (the master is non-blocking: EAGAIN
 * when the terminal is full, tried again on the next turn), as node-pty's own does.
 */
function spawnAddon(spec: TerminalSpawn): TerminalProcess {
  const pty = addonBinding();
  const output = outputFanout();
  const exitListeners: Array<(exit: TerminalExit) => void> = [];
  let exit: TerminalExit | null = null;
  let readDone = false;
  let told = false;
  const hand = output.hand;
  const tell = () => {
    if (told || exit === null || !readDone) return;
    told = true;
    for (const l of exitListeners) l(exit);
  };
  const env = Object.entries(spec.env).map(([k, v]) => `${k}=${v}`);
  const term = pty.fork(spec.file, spec.args, env, spec.cwd, spec.cols, spec.rows, -1, -1, true, "", (code, signal) => {
    const name = signal ? signalName(signal) : null;
    exit = { code: name === null ? code : null, signal: name };
    if (readDone) return tell();
    // What it wrote is read until the terminal says it is over (EIO: no one holds it
    // now); a job it left in the background that still holds it is hung up on.
    setTimeout(() => finishReading(), AFTER_EXIT_MS);
  });
  const fd = term.fd;
  let reader: tty.ReadStream | null = null;
  /** Readers that saw a read of 0 bytes: kept (open) so that nothing closes the master twice. */
  const spent: tty.ReadStream[] = [];
  let rearmDelay = 0;
  const done = () => {
    readDone = true;
    queue.length = 0;
    reader?.destroy();
    reader = null;
    tell();
  };
  const finishReading = () => {
    if (readDone) return;
    // What the master still holds is read before it is closed (a loaded loop may come here first).
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch {
        break;
      }
      if (n <= 0) break;
      hand(Buffer.from(buf.subarray(0, n)));
    }
    done();
  };
  // The master can read 0 bytes (EOF to libuv, which then stops reading it) while the
  // program runs on and writes more (seen about once in a hundred short runs, node-pty's
  // own reader included): that is not its end. A new reader takes over, after a pause
  // that grows while reads keep coming back empty; the end is the exit, or EIO.
  const arm = () => {
    if (readDone) return;
    const r = new tty.ReadStream(fd, { allowHalfOpen: true });
    reader = r;
    r.on("data", (chunk: Buffer) => {
      rearmDelay = 0;
      hand(chunk);
    });
    r.on("end", () => {
      if (reader !== r) return;
      spent.push(r);
      reader = null;
      if (exit !== null) return finishReading();
      setTimeout(arm, rearmDelay);
      rearmDelay = Math.min(Math.max(1, rearmDelay * 2), 100);
    });
    r.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EAGAIN" || reader !== r) return;
      // EIO: the program and everything that held its terminal are gone.
      done();
    });
    r.on("close", () => {
      if (reader === r) done();
    });
  };
  arm();
  const queue: Buffer[] = [];
  const flush = () => {
    const head = queue[0];
    if (head === undefined || readDone) return;
    fs.write(fd, head, 0, head.length, null, (err, written) => {
      if (err) {
        if (err.code === "EAGAIN") setImmediate(flush);
        else queue.length = 0;
        return;
      }
      if (written >= head.length) queue.shift();
      else queue[0] = head.subarray(written);
      flush();
    });
  };
  return {
    pid: term.pid,
    onData: output.onData,
    onExit: (listener) => {
      exitListeners.push(listener);
    },
    write: (data) => {
      if (readDone) return;
      let rest = data;
      if (queue.length === 0) {
        // Straight to the terminal while it takes it (a keystroke: no round through the
        // thread pool); the master is non-blocking, so what it cannot take now is queued.
        try {
          rest = rest.subarray(fs.writeSync(fd, rest));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EAGAIN") return;
        }
        if (rest.length === 0) return;
      }
      queue.push(rest);
      if (queue.length === 1) flush();
    },
    pendingInput: () => queue.reduce((n, b) => n + b.length, 0),
    resize: ({ cols, rows }) => {
      try {
        pty.resize(fd, cols, rows);
      } catch {
        // The terminal is gone.
      }
    },
    close: () => finishReading(),
  };
}

interface BunTerminal {
  write(data: Uint8Array | string): number;
  resize(cols: number, rows: number): void;
  close(): void;
}

interface BunSubprocess {
  readonly pid: number;
  readonly exited: Promise<number>;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly terminal?: BunTerminal;
}

interface BunRuntime {
  spawn(
    cmd: string[],
    opts: {
      cwd: string;
      env: Record<string, string>;
      terminal: TerminalSize & {
        data: (terminal: BunTerminal, chunk: Uint8Array) => void;
        drain: (terminal: BunTerminal) => void;
      };
    },
  ): BunSubprocess;
}

function spawnBun(spec: TerminalSpawn): TerminalProcess {
  const bun = (globalThis as unknown as { Bun: BunRuntime }).Bun;
  const output = outputFanout();
  // Bun's terminal takes every byte written to it at once, keeping what the terminal
  // cannot take yet, and calls `drain` once all it kept has gone to the terminal (a
  // write is never to be repeated for what its return value leaves out). What was
  // written since the last drain is what the terminal has not taken: the input
  // back-pressure callers read through pendingInput(), as on Node.
  let unflushed = 0;
  const proc = bun.spawn([spec.file, ...spec.args], {
    cwd: spec.cwd,
    env: spec.env,
    terminal: {
      cols: spec.cols,
      rows: spec.rows,
      data: (_t, chunk) => output.hand(Buffer.from(chunk)),
      drain: () => {
        unflushed = 0;
      },
    },
  });
  const terminal = proc.terminal!;
  return {
    pid: proc.pid,
    onData: output.onData,
    onExit: (listener) => {
      void proc.exited.then(() => listener({ code: proc.signalCode ? null : proc.exitCode, signal: proc.signalCode }));
    },
    write: (data) => {
      try {
        terminal.write(data);
        unflushed += data.length;
      } catch {
        // Closed meanwhile: nothing more reaches the program.
      }
    },
    pendingInput: () => unflushed,
    resize: ({ cols, rows }) => {
      try {
        terminal.resize(cols, rows);
      } catch {
        // Closed meanwhile.
      }
    },
    close: () => terminal.close(),
  };
}

/** A signal number as Node names it ("SIGKILL"), or null when it has no name. */
function signalName(n: number): NodeJS.Signals | null {
  const os = require("node:os") as typeof import("node:os");
  const entry = Object.entries(os.constants.signals).find(([, v]) => v === n);
  return entry === undefined ? null : (entry[0] as NodeJS.Signals);
}
