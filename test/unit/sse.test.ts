import { describe, expect, it } from "vitest";
import { SseReader } from "../../src/client/sse.js";

const frames =
  'id: 1\nevent: started\ndata: {"execution_id":"exe_1"}\n\n' +
  ": ping\n\n" +
  'id: 2\nevent: output\ndata: {"text":"héllo ✓ 😀"}\n\n' +
  'id: 3\r\nevent: exit\r\ndata: {"outcome":"succeeded"}\r\n\r\n' +
  'id: 4\nevent: end\ndata: {"state":"complete"}\n\n';
const bytes = Buffer.from(frames, "utf8");

function feedInChunks(size: number) {
  const r = new SseReader();
  const events = [];
  for (let i = 0; i < bytes.length; i += size) events.push(...r.feed(bytes.subarray(i, i + size)));
  return { r, events };
}

describe("SseReader", () => {
  it.each([1, 2, 3, 5, 7, 13, 64, bytes.length])("reads the same events fed in chunks of %i bytes", (size) => {
    const { r, events } = feedInChunks(size);
    expect(events.map((e) => [e.id, e.type])).toEqual([
      [1, "started"],
      [2, "output"],
      [3, "exit"],
      [4, "end"],
    ]);
    expect(JSON.parse(events[1]!.data).text).toBe("héllo ✓ 😀");
    expect(r.lastId).toBe(4);
    expect(r.comments).toBe(1);
  });

  it("never advances the cursor on a partial final frame", () => {
    const cut = frames.indexOf("id: 4") + 'id: 4\nevent: end\ndata: {"sta'.length;
    for (let at = frames.indexOf("id: 4"); at < frames.length - 1; at++) {
      const r = new SseReader();
      const events = r.feed(Buffer.from(frames.slice(0, at)));
      expect(events.at(-1)?.id).toBe(3);
      expect(r.lastId).toBe(3);
    }
    // After a reconnect the partial frame is forgotten, and the re-sent frame counts once.
    const r = new SseReader();
    r.feed(Buffer.from(frames.slice(0, cut)));
    r.resetConnection();
    const again = r.feed(Buffer.from('id: 4\nevent: end\ndata: {"state":"complete"}\n\n'));
    expect(again.map((e) => e.id)).toEqual([4]);
    expect(r.lastId).toBe(4);
  });

  it("starts from a given cursor and keeps it until a complete event", () => {
    const r = new SseReader(41);
    expect(r.feed(Buffer.from("id: 42\nevent: output\ndata: {}"))).toEqual([]);
    expect(r.lastId).toBe(41);
    expect(r.feed(Buffer.from("\n\n")).map((e) => e.id)).toEqual([42]);
    expect(r.lastId).toBe(42);
  });
});
