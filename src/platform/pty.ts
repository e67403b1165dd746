// The runtime seam for pseudo-terminals (docs/drivers.md, "Terminals"). On Node this
// is node-pty (a native addon, pinned exactly: its flow control is read below); the
// release binary compiled with Bun uses Bun's own terminal (`Bun.spawn({ terminal })`).
// A program started here is the leader of a new session whose controlling terminal
// is a new pseudo-terminal opened from the /dev/ptmx of the process that calls this —
// never the user's own terminal. Nothing else in the code base opens a PTY.

import fs from "node:fs";
import { createRequire } from "node:module";
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
  return isBunRuntime() ? spawnBun(spec) : spawnNodePty(spec);
}

/** Why terminals cannot be had here, or null when they can (loads the Node addon once). */
export function terminalSupport(): string | null {
  if (isBunRuntime()) return null;
  try {
    nodePty();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

type NodePty = typeof import("node-pty");
let loaded: NodePty | null = null;

function nodePty(): NodePty {
  if (loaded !== null) return loaded;
  try {
    loaded = require("node-pty") as NodePty;
    return loaded;
  } catch (err) {
    const why = (err as Error)?.message?.split("\n")[0] ?? String(err);
    throw new TerminalUnavailable(
      `terminals need node-pty's native addon on Node, and it cannot be loaded: ${why} (reinstall with npm ci; python3, make and g++ build it)`,
    );
  }
}

/** node-pty 1.1.0's queue of bytes not yet written to the master (private: the version is pinned for it). */
interface NodePtyInternals {
  _writeStream?: { _writeQueue?: Array<{ buffer: Buffer; offset: number }> };
  /** The master's read stream, and the master's descriptor. */
  _socket?: { destroy: (...args: unknown[]) => unknown };
  _fd?: number;
}

/**
 * node-pty 1.1.0 destroys its read stream 200 ms after the program exited, whether or not
 * everything was read: on a loaded machine the loop can wake with that timer due before
 * it reads what is waiting, and the program's last output was lost (seen in CI). Before
 * the stream is destroyed, what the master still holds is read here and handed on.
 */
function readRestBeforeDestroy(internals: NodePtyInternals, hand: (chunk: Buffer) => void): void {
  const socket = internals._socket;
  const fd = internals._fd;
  if (socket === undefined || fd === undefined) return;
  const destroy = socket.destroy.bind(socket);
  socket.destroy = (...args: unknown[]) => {
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch {
        break; // EAGAIN: nothing more now; EIO: the terminal is gone and empty
      }
      if (n <= 0) break;
      hand(Buffer.from(buf.subarray(0, n)));
    }
    return destroy(...args);
  };
}

function spawnNodePty(spec: TerminalSpawn): TerminalProcess {
  const pty = nodePty().spawn(spec.file, spec.args, {
    name: spec.env.TERM ?? "xterm-256color",
    cols: spec.cols,
    rows: spec.rows,
    cwd: spec.cwd,
    env: spec.env,
    // Bytes, not text: a terminal's output is not always UTF-8 (and a chunk may end mid-character).
    encoding: null,
  });
  const internals = pty as unknown as NodePtyInternals;
  const listeners: Array<(chunk: Buffer) => void> = [];
  readRestBeforeDestroy(internals, (chunk) => {
    for (const listener of listeners) listener(chunk);
  });
  return {
    pid: pty.pid,
    onData: (listener) => {
      listeners.push(listener);
      pty.onData((data: string | Buffer) => listener(typeof data === "string" ? Buffer.from(data) : data));
    },
    onExit: (listener) => {
      pty.onExit(({ exitCode, signal }) => {
        const name = signal ? signalName(signal) : null;
        listener({ code: name === null ? exitCode : null, signal: name });
      });
    },
    write: (data) => pty.write(data as unknown as string),
    pendingInput: () =>
      (internals._writeStream?._writeQueue ?? []).reduce((n, task) => n + task.buffer.length - task.offset, 0),
    resize: ({ cols, rows }) => {
      try {
        pty.resize(cols, rows);
      } catch {
        // The program ended meanwhile: its terminal is gone.
      }
    },
    close: () => {
      try {
        pty.kill("SIGHUP");
      } catch {
        // Gone already.
      }
    },
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
      terminal: TerminalSize & { data: (terminal: BunTerminal, chunk: Uint8Array) => void };
    },
  ): BunSubprocess;
}

function spawnBun(spec: TerminalSpawn): TerminalProcess {
  const bun = (globalThis as unknown as { Bun: BunRuntime }).Bun;
  const dataListeners: Array<(chunk: Buffer) => void> = [];
  const early: Buffer[] = [];
  // Bytes Bun's terminal did not take at once; written on as it takes them.
  const queue: Buffer[] = [];
  const proc = bun.spawn([spec.file, ...spec.args], {
    cwd: spec.cwd,
    env: spec.env,
    terminal: {
      cols: spec.cols,
      rows: spec.rows,
      data: (_t, chunk) => {
        const buf = Buffer.from(chunk);
        if (dataListeners.length === 0) early.push(buf);
        for (const l of dataListeners) l(buf);
      },
    },
  });
  const terminal = proc.terminal!;
  let flushing = false;
  const flush = () => {
    while (queue.length > 0) {
      const head = queue[0]!;
      const n = terminal.write(head);
      if (n >= head.length) queue.shift();
      else {
        queue[0] = head.subarray(Math.max(0, n));
        if (!flushing) {
          flushing = true;
          setTimeout(() => {
            flushing = false;
            flush();
          }, 5);
        }
        return;
      }
    }
  };
  return {
    pid: proc.pid,
    onData: (listener) => {
      dataListeners.push(listener);
      for (const b of early.splice(0)) listener(b);
    },
    onExit: (listener) => {
      void proc.exited.then(() => listener({ code: proc.signalCode ? null : proc.exitCode, signal: proc.signalCode }));
    },
    write: (data) => {
      queue.push(data);
      if (queue.length === 1) flush();
    },
    pendingInput: () => queue.reduce((n, b) => n + b.length, 0),
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
