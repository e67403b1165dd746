// The SSE reader: bytes in (in any chunking), complete events out. Framing is
// eventsource-parser's; the cursor is ours: it advances only when an event is
// complete (terminated by its blank line), so a partial frame at a dropped
// connection never moves it and is re-read after reconnecting.

import { createParser, type EventSourceParser } from "eventsource-parser";

export interface SseEvent {
  /** The event's id as a sequence number, or null when it carried none. */
  id: number | null;
  type: string;
  data: string;
}

export class SseReader {
  private decoder = new TextDecoder("utf-8");
  private readonly parser: EventSourceParser;
  private pending: SseEvent[] = [];
  /** The id of the last complete event with an id: what Last-Event-ID should say. */
  lastId: number | null;
  comments = 0;

  constructor(startAfter: number | null = null) {
    this.lastId = startAfter;
    this.parser = createParser({
      onEvent: (msg) => {
        const id = msg.id !== undefined && /^\d+$/.test(msg.id) ? Number(msg.id) : null;
        if (id !== null) this.lastId = id;
        this.pending.push({ id, type: msg.event ?? "message", data: msg.data });
      },
      onComment: () => {
        this.comments++;
      },
    });
  }

  /** Feeds raw bytes; returns the events they completed. A UTF-8 character split across chunks is kept whole. */
  feed(chunk: Uint8Array): SseEvent[] {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** Forgets a partial frame (the connection dropped); the cursor stays at the last complete event. */
  resetConnection(): void {
    this.parser.reset({ consume: false });
    this.decoder = new TextDecoder("utf-8");
    this.pending = [];
  }
}
