// A run on a pseudo-terminal (docs/drivers.md, "Terminals"): the program is started
// by the platform's terminal seam as the leader of a session of its own, whose
// controlling terminal is a new PTY (never the user's). Its shell's jobs are process
// groups of their own in that session, so the run is the session: every process of
// it is signalled, and it is over when none is left. Output is one stream (stdout);
// input goes through the leader's `stdin`, a Writable that fills up (writableLength)
// while the program does not read, as a pipe would.

import { EventEmitter } from "node:events";
import { Writable } from "node:stream";
import { spawnOnTerminal, type TerminalProcess, type TerminalSize } from "../../platform/pty.js";
import type { CommandEnd, LeaderProcess, SandboxChild, TerminalControl } from "./driver.js";
import { sessionMembers } from "./proc.js";
import { NONE_USAGE } from "./limits/usage.js";

/** Bytes the terminal may hold unwritten before the leader's stdin reports back-pressure. */
const PENDING_INPUT_HIGH = 64 * 1024;
/** Output told as one chunk at most (the event log's largest output event). */
const COALESCE_MAX = 64 * 1024;
/** How often a full terminal is looked at again to let more input through. */
const PENDING_INPUT_POLL_MS = 10;

/** Spawns `argv` on a new terminal; throws what spawning throws (ENOENT, TerminalUnavailable). */
export function spawnTerminalRun(spec: {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  size: TerminalSize;
}): SandboxChild {
  const term = spawnOnTerminal({
    file: spec.argv[0] ?? "",
    args: spec.argv.slice(1),
    cwd: spec.cwd,
    env: { TERM: "xterm-256color", ...spec.env },
    ...spec.size,
  });
  return new TerminalChild(term);
}

/** The terminal's leader, as the backend uses a leader (LeaderProcess): pid, stdin, 'exit', 'close'. */
class TerminalLeader extends EventEmitter {
  readonly stdout = null;
  readonly stderr = null;
  readonly stdio = [];
  readonly stdin: Writable;

  constructor(
    readonly pid: number,
    term: TerminalProcess,
  ) {
    super();
    this.stdin = new Writable({
      highWaterMark: PENDING_INPUT_HIGH,
      write(chunk: Buffer, _enc, done) {
        term.write(chunk);
        const waitForRoom = () => {
          if (term.pendingInput() < PENDING_INPUT_HIGH) done();
          else setTimeout(waitForRoom, PENDING_INPUT_POLL_MS);
        };
        waitForRoom();
      },
      final(done) {
        // End of input on a terminal is its EOF character (^D at the start of a line).
        term.write(Buffer.from([0x04]));
        done();
      },
    });
  }

  unref(): void {
    // The terminal's descriptors are the seam's; nothing here holds the loop.
  }
}

class TerminalChild implements SandboxChild {
  readonly started = Promise.resolve(true);
  readonly process: LeaderProcess;
  readonly terminal: TerminalControl;
  private readonly leader: TerminalLeader;
  private readonly listeners: Array<(stream: "stdout" | "stderr", chunk: Buffer) => void> = [];

  constructor(private readonly term: TerminalProcess) {
    this.leader = new TerminalLeader(term.pid, term);
    this.process = this.leader;
    this.terminal = { resize: (size) => term.resize(size) };
    // A terminal hands over output a few KiB at a time: what comes within one turn of the
    // event loop is told as one chunk (one event, one append), up to COALESCE_MAX.
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = () => {
      if (pendingBytes === 0) return;
      const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
      pending = [];
      pendingBytes = 0;
      for (const l of this.listeners) l("stdout", chunk);
    };
    term.onData((chunk) => {
      if (pendingBytes === 0) setImmediate(flush);
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= COALESCE_MAX) flush();
    });
    term.onExit(({ code, signal }) => {
      flush();
      this.leader.emit("exit", code, signal);
      this.leader.emit("close", code, signal);
    });
  }

  get pgid(): number {
    return this.term.pid;
  }

  onOutput(listener: (stream: "stdout" | "stderr", chunk: Buffer) => void): void {
    this.listeners.push(listener);
  }

  signal(signal: NodeJS.Signals): boolean {
    let members: number[];
    try {
      members = sessionMembers(this.term.pid).map((p) => p.pid);
    } catch {
      members = [this.term.pid];
    }
    let any = false;
    for (const pid of members) {
      try {
        process.kill(pid, signal);
        any = true;
      } catch {
        // Gone meanwhile.
      }
    }
    if (signal === "SIGKILL") this.term.close();
    return any;
  }

  commandEnd(code: number | null, signal: NodeJS.Signals | null, done: (end: CommandEnd) => void): void {
    done({ code, signal, startFailure: null, endReason: null, usage: NONE_USAGE });
  }

  members(): string[] {
    return sessionMembers(this.term.pid).map((p) => p.name);
  }

  proceed(): void {
    // Never held: the command runs from its spawn.
  }
}
