import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ProcessLogStream } from "../../src/backend/processes/logs.js";
import { tempDir } from "./support.js";

const TINY = { segmentBytes: 10, keepBytes: 25 };

function bytes(from: number, count: number): Buffer {
  return Buffer.from(Array.from({ length: count }, (_, i) => (from + i) % 256));
}

function files(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of fs.readdirSync(dir).sort()) out[name] = fs.statSync(path.join(dir, name)).size;
  return out;
}

describe("ProcessLogStream with tiny limits", () => {
  it("rotates into files named by their start offset and deletes the oldest beyond the kept bytes", () => {
    const dir = path.join(tempDir(), "prc_x");
    const log = ProcessLogStream.open(dir, "stdout", TINY);
    log.append(bytes(0, 4));
    expect(files(dir)).toEqual({ "stdout.0.log": 4 });
    log.append(bytes(4, 13));
    expect(files(dir)).toEqual({ "stdout.0.log": 10, "stdout.10.log": 7 });
    log.append(bytes(17, 16));
    // 33 bytes produced; 0..9 went when 30..32 arrived (40 > 25 would be kept otherwise).
    expect(files(dir)).toEqual({ "stdout.10.log": 10, "stdout.20.log": 10, "stdout.30.log": 3 });
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, "stdout.30.log")).mode & 0o777).toBe(0o600);
    expect({ end: log.end, oldest: log.oldestOffset }).toEqual({ end: 33, oldest: 10 });

    expect(log.read(0, 100)).toEqual({
      offset: 10,
      rotated: true,
      data: bytes(10, 23),
      nextOffset: 33,
      oldestOffset: 10,
    });
    const a = log.read(12, 9);
    const b = log.read(a.nextOffset, 100);
    expect(Buffer.concat([a.data, b.data])).toEqual(bytes(12, 21));
    expect(b.nextOffset).toBe(33);
    expect(log.read(33, 10).data.length).toBe(0);
    log.seal();
    expect(() => log.append(bytes(0, 1))).toThrow(/sealed/);
  });

  it("opens a range as descriptors that still read whole after its segments are rotated away", () => {
    const dir = path.join(tempDir(), "prc_open");
    const log = ProcessLogStream.open(dir, "stdout", TINY);
    log.append(bytes(0, 23));
    const range = log.openRange(3, 100);
    expect(range).toMatchObject({ offset: 3, rotated: false, nextOffset: 23, oldestOffset: 0 });
    expect(range.pieces.map((p) => [p.position, p.length])).toEqual([
      [3, 7],
      [0, 10],
      [0, 3],
    ]);
    // 30 bytes more: stdout.0.log and stdout.10.log are deleted, stdout.20.log grows.
    log.append(bytes(23, 30));
    expect(files(dir)).not.toHaveProperty("stdout.0.log");
    expect(files(dir)).not.toHaveProperty("stdout.10.log");
    const read = range.pieces.map((p) => {
      const buf = Buffer.alloc(p.length);
      expect(fs.readSync(p.fd, buf, 0, p.length, p.position)).toBe(p.length);
      fs.closeSync(p.fd);
      return buf;
    });
    expect(Buffer.concat(read).equals(bytes(3, 20))).toBe(true);
    // Past the end: nothing opened.
    expect(log.openRange(log.end, 10).pieces).toEqual([]);
  });

  it("continues offsets and the last file when opened again, even with a stale known end", () => {
    const dir = tempDir();
    const first = ProcessLogStream.open(dir, "stderr", TINY);
    first.append(bytes(0, 14));
    first.closeFile();
    const again = ProcessLogStream.open(dir, "stderr", TINY, 3);
    expect(again.end).toBe(14);
    again.append(bytes(14, 3));
    expect(files(dir)).toEqual({ "stderr.0.log": 10, "stderr.10.log": 7 });
    expect(again.read(0, 100).data).toEqual(bytes(0, 17));
  });

  it("never goes back when files were lost: the known end wins and reads start there", () => {
    const dir = tempDir();
    const first = ProcessLogStream.open(dir, "stdout", TINY);
    first.append(bytes(0, 12));
    first.closeFile();
    fs.rmSync(path.join(dir, "stdout.10.log"));
    const again = ProcessLogStream.open(dir, "stdout", TINY, 12);
    expect(files(dir)).toEqual({});
    expect(again.read(0, 100)).toMatchObject({ offset: 12, rotated: true, nextOffset: 12 });
    again.append(bytes(12, 2));
    expect(files(dir)).toEqual({ "stdout.12.log": 2 });
    expect(again.read(0, 100)).toMatchObject({ offset: 12, rotated: true, data: bytes(12, 2), nextOffset: 14 });
  });

  it("keeps stdout and stderr apart in one directory", () => {
    const dir = tempDir();
    const out = ProcessLogStream.open(dir, "stdout", TINY);
    const err = ProcessLogStream.open(dir, "stderr", TINY);
    out.append(Buffer.from("out"));
    err.append(Buffer.from("error"));
    expect(out.read(0, 100).data.toString()).toBe("out");
    expect(err.read(0, 100).data.toString()).toBe("error");
  });

  it("cuts a tail at a character boundary", () => {
    const log = ProcessLogStream.open(tempDir(), "stdout", { segmentBytes: 1024, keepBytes: 4096 });
    log.append(Buffer.from("aé€z"));
    // 7 bytes: a, é (2), € (3), z. The last 3 start inside €, the last 5 inside é:
    // their continuation bytes are skipped.
    expect(log.tail(3).toString("utf8")).toBe("z");
    expect(log.tail(4).toString("utf8")).toBe("€z");
    expect(log.tail(5).toString("utf8")).toBe("€z");
    expect(log.tail(6).toString("utf8")).toBe("é€z");
    expect(log.tail(100).toString("utf8")).toBe("aé€z");
  });

  it("wakes a waiting reader on new bytes and on seal, and times out otherwise", async () => {
    const log = ProcessLogStream.open(tempDir(), "stdout", TINY);
    const t0 = Date.now();
    await log.waitForBytes(0, 50);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(40);

    const woken = log.waitForBytes(0, 10_000);
    setTimeout(() => log.append(Buffer.from("x")), 20);
    await woken;
    expect(log.end).toBe(1);

    const sealed = log.waitForBytes(1, 10_000);
    setTimeout(() => log.seal(), 20);
    await sealed;
    expect(log.isSealed).toBe(true);
    // Already past, already sealed: no wait at all.
    await log.waitForBytes(0, 10_000);
    await log.waitForBytes(1, 10_000);
  });
});
