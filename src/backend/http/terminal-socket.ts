// The terminal route's WebSocket (docs/protocol.md, "Terminals"): one client attached
// to a run on a terminal. Output is the run's transcript read from the client's own
// offset, at the client's pace: a chunk is read from disk only while what was sent
// and not yet taken by the client is under OUTPUT_HIGH_WATER, so a slow client costs
// the backend a bounded amount of memory whatever the program writes. Input goes to
// the terminal while it takes it (the socket is paused while the terminal is full).
// The last client to attach to a run is the one attached: an earlier one is told
// (`detached`) and closed.

import type { WebSocket } from "ws";
import { TERMINAL_MESSAGE_MAX_BYTES } from "../../protocol/types.js";
import { checkTerminalSize } from "../../protocol/validate.js";

/** The fields of a resize message (`{"type":"resize","cols","rows"}`). */
const RESIZE_FIELDS = ["type", "cols", "rows"] as const;
import type { TerminalSource } from "../runs/index.js";

/** Bytes sent to a client and not yet written to its connection, at most (then reading pauses). */
const OUTPUT_HIGH_WATER = 256 * 1024;
/** Bytes read from the transcript for one message. */
const OUTPUT_CHUNK = 64 * 1024;

/** Close codes of the route beyond the standard ones. */
export const CLOSE_ATTACHED_ELSEWHERE = 4000;
export const CLOSE_NORMAL = 1000;
export const CLOSE_POLICY = 1008;
export const CLOSE_GOING_AWAY = 1001;

/** Who is attached to which run (`execution:exe_…`, `process:prc_…`): the last one wins. */
export class Attachments {
  private readonly current = new Map<string, TerminalAttachment>();
  private readonly all = new Set<TerminalAttachment>();

  attach(key: string, ws: WebSocket, source: TerminalSource, offset: number, hello: Record<string, unknown>): void {
    const previous = this.current.get(key);
    const attachment = new TerminalAttachment(ws, source, offset, () => {
      this.all.delete(attachment);
      if (this.current.get(key) === attachment) this.current.delete(key);
    });
    this.current.set(key, attachment);
    this.all.add(attachment);
    previous?.detach("another client attached to this terminal");
    attachment.start(hello);
  }

  /** Every client is closed (the backend stops): they may attach again to a backend that runs. */
  closeAll(reason: string): void {
    for (const a of [...this.all]) a.close(CLOSE_GOING_AWAY, reason);
  }
}

class TerminalAttachment {
  private offset: number;
  private stopWatching: (() => void) | null = null;
  private pumping = false;
  private done = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly source: TerminalSource,
    offset: number,
    private readonly onClosed: () => void,
  ) {
    this.offset = offset;
  }

  start(hello: Record<string, unknown>): void {
    this.ws.on("close", () => this.finish());
    this.ws.on("error", () => this.finish());
    this.ws.on("message", (data, isBinary) => this.received(data as Buffer, isBinary));
    this.send(JSON.stringify({ type: "attached", offset: this.offset, ...hello }));
    this.stopWatching = this.source.watch(() => this.pump());
    this.pump();
  }

  detach(reason: string): void {
    if (this.done) return;
    this.send(JSON.stringify({ type: "detached", reason }));
    this.close(CLOSE_ATTACHED_ELSEWHERE, "attached elsewhere");
  }

  close(code: number, reason: string): void {
    if (this.done) return;
    this.finish();
    this.ws.close(code, reason);
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.stopWatching?.();
    this.onClosed();
  }

  private send(data: string | Buffer, then?: () => void): void {
    this.ws.send(data, { binary: typeof data !== "string" }, () => then?.());
  }

  /** Sends the transcript from the client's offset while the connection takes it; at its end, the exit. */
  private pump(): void {
    if (this.done || this.pumping) return;
    this.pumping = true;
    try {
      while (!this.done && this.ws.bufferedAmount < OUTPUT_HIGH_WATER) {
        // Read the end first: once it is known, the transcript is complete.
        const ended = this.source.ended();
        const read = this.source.read(this.offset, OUTPUT_CHUNK);
        if (read.offset > this.offset) {
          this.send(JSON.stringify({ type: "gap", offset: this.offset, bytes: read.offset - this.offset }));
          this.offset = read.offset;
        }
        if (read.data.length > 0) {
          this.offset += read.data.length;
          // Sent: room for more may have come.
          this.send(read.data, () => this.pump());
          continue;
        }
        if (ended !== null) {
          this.send(JSON.stringify({ type: "exit", ...ended }));
          this.close(CLOSE_NORMAL, "exited");
        }
        return;
      }
    } finally {
      this.pumping = false;
    }
  }

  private received(data: Buffer, isBinary: boolean): void {
    if (this.done) return;
    if (isBinary) {
      const terminal = this.source.terminal();
      if (terminal === null) return; // Ended (or between two runs): nothing reads it.
      if (!terminal.input.write(data)) {
        this.ws.pause();
        terminal.input.once("drain", () => this.ws.resume());
        terminal.input.once("close", () => this.ws.resume());
      }
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(data.toString("utf8"));
    } catch {
      msg = null;
    }
    const m = msg as { type?: unknown } | null;
    if (m?.type === "resize" && checkTerminalSize(m, "resize", RESIZE_FIELDS) === null) {
      const { cols, rows } = m as unknown as { cols: number; rows: number };
      this.source.terminal()?.resize({ cols, rows });
      return;
    }
    this.send(
      JSON.stringify({
        type: "error",
        message: `not a message of this route (binary input, or {"type":"resize","cols","rows"} of at most ${TERMINAL_MESSAGE_MAX_BYTES} bytes)`,
      }),
    );
    this.close(CLOSE_POLICY, "unknown message");
  }
}
