import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventDrafter } from "../../src/backend/executions/event-drafter.js";
import { EXECUTE, startTestBackend, type TestBackend } from "./support.js";
import { executionPath } from "./stream-support.js";

const AT = "2026-01-01T00:00:00.000Z";
const KIB = 1024;
const MIB = 1024 * 1024;

describe("EventDrafter with an output file cap", () => {
  it("splits a gap at the cap; a gap past it says kept: false", () => {
    const d = new EventDrafter(2, 64, 5);
    d.output("stdout", Buffer.from("abcdefgh"), AT);
    d.releaseGaps(10_000, false);
    d.output("stdout", Buffer.from("ij"), AT);
    d.releaseGaps(20_000, true);
    expect(d.take().map((e) => [e.type, e.data])).toEqual([
      ["output", { stream: "stdout", offset: 0, data: Buffer.from("ab").toString("base64") }],
      ["gap", { stream: "stdout", offset: 2, bytes: 3 }],
      ["gap", { stream: "stdout", offset: 5, bytes: 3, kept: false }],
      ["gap", { stream: "stdout", offset: 8, bytes: 2, kept: false }],
    ]);
  });
});

describe("execution output cap (executionOutputMaxBytes)", () => {
  let b: TestBackend | undefined;
  afterEach(async () => {
    await b?.stop();
    b = undefined;
  });

  it("keeps the first 64 KiB of a 1 MiB stdout on disk; counts, gaps and /output stay consistent", async () => {
    b = await startTestBackend({ executionOutputMaxBytes: 64 * KIB, eventOutputBudget: 16 * KIB });
    // 1 MiB of "abcdefg\n" lines, then a little stderr (under the cap).
    const res = await b.api("POST", EXECUTE, {
      body: { command: "yes abcdefg | head -c 1048576; printf oops >&2" },
    });
    expect(res.status).toBe(200);
    const record = res.json;
    expect(record).toMatchObject({
      outcome: "succeeded",
      exit_code: 0,
      stdout_bytes: MIB,
      stdout_truncated: true,
      stderr: "oops",
      stderr_bytes: 4,
      stderr_truncated: false,
    });
    // The record's tail follows its own rules (the last 1 MiB): here all of it.
    expect(record.stdout.length).toBe(MIB);
    expect(record.stdout).toBe("abcdefg\n".repeat(MIB / 8));

    // On disk: exactly the cap.
    const sandbox = (await b.api("GET", "/api/v1/sandbox/default")).json;
    const dir = path.join(b.dataDir, "sandboxes", sandbox.sandbox_id, "executions", record.execution_id);
    expect(fs.statSync(path.join(dir, "stdout")).size).toBe(64 * KIB);
    expect(fs.readFileSync(path.join(dir, "stdout"), "utf8")).toBe("abcdefg\n".repeat((64 * KIB) / 8));
    expect(fs.readFileSync(path.join(dir, "stderr"), "utf8")).toBe("oops");

    // Events: output, then gaps, covering every byte once; none straddles the cap.
    const events = (await b.api("GET", `${executionPath(record.execution_id, "/events")}?after_sequence=0&limit=1000`))
      .json.events as Array<{
      type: string;
      data: { stream: string; offset: number; bytes?: number; data?: string; kept?: boolean };
    }>;
    let next = 0;
    for (const e of events) {
      if ((e.type !== "output" && e.type !== "gap") || e.data.stream !== "stdout") continue;
      expect(e.data.offset).toBe(next);
      const length = e.type === "output" ? Buffer.from(e.data.data!, "base64").length : e.data.bytes!;
      if (e.type === "gap") {
        const end = e.data.offset + length;
        expect(end <= 64 * KIB || e.data.offset >= 64 * KIB).toBe(true);
        expect(e.data.kept).toBe(e.data.offset >= 64 * KIB ? false : undefined);
      }
      next += length;
    }
    expect(next).toBe(MIB);
    expect(events.some((e) => e.type === "gap" && e.data.kept === false)).toBe(true);

    // /output stops at what was kept: eof there, 422 past it.
    const url = executionPath(record.execution_id, "/output");
    const all = (await b.api("GET", `${url}?stream=stdout&offset=0&limit=${4 * MIB}`)).json;
    expect(all).toMatchObject({ offset: 0, next_offset: 64 * KIB, eof: true });
    expect(Buffer.from(all.data, "base64").length).toBe(64 * KIB);
    expect((await b.api("GET", `${url}?offset=${64 * KIB}`)).json).toEqual({
      stream: "stdout",
      offset: 64 * KIB,
      next_offset: 64 * KIB,
      data: "",
      eof: true,
    });
    const past = await b.api("GET", `${url}?offset=${64 * KIB + 1}`);
    expect(past.status).toBe(422);
    expect(past.json.error).toMatchObject({
      code: "invalid_cursor",
      details: { stream: "stdout", offset: 64 * KIB + 1, size: 64 * KIB, kept_bytes: 64 * KIB, stream_bytes: MIB },
    });
    expect((await b.api("GET", `${url}?stream=stderr`)).json).toMatchObject({ next_offset: 4, eof: true });
  });
});
