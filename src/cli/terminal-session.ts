// Relaying a sandbox's terminal to the user's (sbx shell, exec -it, attach): the local
// terminal in raw mode, keys to the backend as typed (Ctrl-C too: it is the program's),
// its output to stdout, window resizes followed, until the program exits, the detach
// keys are typed, another client attaches, the connection drops or sbx is told to
// stop. The local terminal's mode is restored on each of those ways out.

import type { Endpoint } from "../client/endpoint.js";
import {
  openTerminal,
  TerminalClosedBeforeAttach,
  type TerminalConnection,
  type TerminalExit,
} from "../client/terminal.js";
import { DetachScanner } from "../common/detach-keys.js";
import type { Context } from "./context.js";
import type { EndingSignal } from "./io/local-terminal.js";

export type SessionEnd =
  | { kind: "exit"; exit: TerminalExit }
  /** The detach keys were typed: the program goes on. */
  | { kind: "detached" }
  /** Another client attached to the same terminal (the last one wins). */
  | { kind: "taken_over"; reason: string }
  /** The connection ended without an exit: the backend went away, or the network. */
  | { kind: "dropped"; reason: string }
  | { kind: "signal"; signal: EndingSignal };

export interface RelayOptions {
  /** The terminal route's path, with its offset. */
  path: string;
  detachKeys: Buffer;
  /** Called once attached, before raw mode (a line to say how to detach). */
  onAttached?: (offset: number) => void;
  /**
   * Attaching to a program that already runs: it is asked to redraw, as tmux does, by
   * a resize (SIGWINCH) it gets even when this window has the size it had: the size one
   * row off first, then the real one (the kernel signals a change only).
   */
  redraw?: boolean;
}

/** The sizes sent on attach: with `redraw`, one row off first, so the program sees a change whatever its size was. */
export function attachSizes(
  size: { cols: number; rows: number },
  redraw: boolean,
): Array<{ cols: number; rows: number }> {
  if (!redraw) return [size];
  return [{ cols: size.cols, rows: size.rows > 1 ? size.rows - 1 : size.rows + 1 }, size];
}

/** Attaches the user's terminal (it must be one: ctx.io.localTerminal()) until the session ends. */
export async function relayTerminal(ctx: Context, endpoint: Endpoint, opts: RelayOptions): Promise<SessionEnd> {
  const local = ctx.io.localTerminal();
  if (local === null) throw new Error("relayTerminal needs a terminal on stdin");
  const scanner = new DetachScanner(opts.detachKeys);
  const stops: Array<() => void> = [];
  let ended: SessionEnd | null = null;
  let settle!: (end: SessionEnd) => void;
  const settled = new Promise<SessionEnd>((resolve) => {
    settle = (end) => {
      ended ??= end;
      resolve(ended);
    };
  });
  let conn: TerminalConnection | null = null;
  // Keys in order: the next chunk waits until the connection took the last one (typed
  // before it is open, they wait for it).
  let opened!: (c: TerminalConnection) => void;
  let sending: Promise<unknown> = new Promise<TerminalConnection>((resolve) => {
    opened = resolve;
  });
  try {
    // Everything local first: raw before the first byte of output (keys typed meanwhile
    // are the sandbox's), and a signal that comes at any moment from here is handled.
    stops.push(local.onSignal((signal) => settle({ kind: "signal", signal })));
    local.enterRaw();
    stops.push(
      local.onInput((bytes) => {
        const { forward, detach } = scanner.scan(bytes);
        if (forward.length > 0) sending = sending.then(() => conn?.send(forward));
        if (detach) void sending.then(() => settle({ kind: "detached" }));
      }),
    );
    try {
      conn = await openTerminal(endpoint, opts.path, {
        onOutput: (bytes) => local.write(bytes),
        onGap: (offset, bytes) => {
          void local.write(Buffer.from(`\r\n[sbx: ${bytes} bytes of output at ${offset} were not kept]\r\n`));
        },
      });
    } catch (err) {
      // Accepted, then closed before it was attached: as a connection that ends later.
      if (!(err instanceof TerminalClosedBeforeAttach)) throw err;
      settle({ kind: "dropped", reason: err.reason });
      return await settled;
    }
    const c = conn;
    opened(c);
    if (ended !== null) return ended;
    opts.onAttached?.(c.offset);
    for (const { cols, rows } of attachSizes(local.size(), opts.redraw === true)) c.resize(cols, rows);
    stops.push(
      local.onResize(() => {
        const size = local.size();
        c.resize(size.cols, size.rows);
      }),
    );
    void c.closed.then((how) => {
      if (how.kind === "exit") settle({ kind: "exit", exit: how.exit });
      else if (how.kind === "detached") settle({ kind: "taken_over", reason: how.reason });
      else settle({ kind: "dropped", reason: how.reason });
    });
    return await settled;
  } finally {
    for (const stop of stops) stop();
    local.restore();
    conn?.close();
  }
}
