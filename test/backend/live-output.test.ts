// Output past the output files' cap is delivered live to the readers that follow the
// execution (issue 30, item 3; src/backend/executions/live-output.ts): a reader behind
// holds the command's output back (its pipe fills, its writes wait), and once the
// reader is gone the command runs on to its end. The queue's pieces, as a pure table.

import fs from "node:fs";
import { Agent, request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { LiveOutput } from "../../src/backend/executions/live-output.js";
import { processesWithArg } from "../support/processes.js";
import { atEndOfFile } from "../support/temp.js";
import { parseFrames } from "./stream-support.js";
import { EXECUTE, startTestBackend, type TestBackend, until } from "./support.js";

const CAP = 64 * 1024;

describe("a reader of output past the cap", () => {
  let b: TestBackend;
  beforeAll(async () => {
    b = await startTestBackend({ executionOutputMaxBytes: CAP, eventOutputBudget: 16 * 1024, liveQueueMaxBytes: CAP });
  });

  it("that stops reading holds the command's writes, and once it reads on gets every byte", async () => {
    const count = uniqueCount(4_000_000);
    const answer = await executeStreamed(count);
    // Not read yet: undici stops reading the socket, the backend's frames wait, its queue fills.
    await until(() => writerBlocked(count), 30_000, "the command's write to wait on its full pipe or socket");
    let raw = "";
    for await (const chunk of answer.body) raw += (chunk as Buffer).toString("utf8");
    const frames = parseFrames(raw);
    expect(frames.filter((f) => f.event === "gap" && f.data.kept === false)).toEqual([]);
    const live = frames.filter((f) => f.event === "output" && f.data.kept === false);
    expect(live.every((f) => f.id === null)).toBe(true);
    const bytes = Buffer.concat(live.map((f) => Buffer.from(f.data.data, "base64")));
    expect(live[0]!.data.offset).toBe(CAP);
    expect(bytes.length).toBe(Number(count) + 4 - CAP);
    expect(bytes.subarray(bytes.length - 4).toString()).toBe("END\n");
    expect(frames[frames.length - 1]!.event).toBe("end");
  });

  it("that does not read holds the command's writes; once it left, the command runs to its end", async () => {
    const count = uniqueCount(4_000_000);
    const answer = await executeStreamed(count);
    const blocked = await until(() => writerBlocked(count), 30_000, "the command's write to wait");
    const listed = await b.api("GET", "/api/v1/sandbox/default/executions");
    const [running] = listed.json.executions as Array<{ execution_id: string; outcome: string }>;
    expect(running!.outcome).toBe("pending");
    expect(processesWithArg(count)).toContain(blocked);
    answer.body.destroy();
    const done = await until(
      async () => {
        const r = await b.api("GET", `/api/v1/sandbox/default/executions/${running!.execution_id}`);
        return r.json.outcome === "pending" ? undefined : r.json;
      },
      30_000,
      "the execution to end once its reader left",
    );
    expect(done).toMatchObject({ outcome: "succeeded", stdout_bytes: Number(count) + 4, stdout_truncated: true });
  });

  /** POST execute (stream: true) of `head -c COUNT /dev/zero; echo END`; its answer's body is not read. */
  async function executeStreamed(count: string) {
    const body = JSON.stringify({ command: ["sh", "-c", `head -c ${count} /dev/zero; echo END`], stream: true });
    const agent = new Agent({ connect: { socketPath: b.socketPath } });
    atEndOfFile(() => agent.close());
    const answer = await request(`http://localhost${EXECUTE}`, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      body,
    });
    expect(answer.statusCode).toBe(200);
    return answer;
  }
});

let counts = 0;
/** A byte count of this file's own, to find its writer among the machine's processes. */
function uniqueCount(base: number): string {
  return String(base + (process.pid % 1000) * 10 + counts++);
}

/** The command's writer (head) waits to write, or undefined. */
function writerBlocked(count: string): number | undefined {
  return processesWithArg(count).find((pid) => WAITS_TO_WRITE.includes(wchan(pid) ?? ""));
}

/** Where a write waits for room: a pipe (none), the socket of a live sandbox's run (bwrap). */
const WAITS_TO_WRITE = ["pipe_write", "sock_alloc_send_pskb", "unix_stream_sendmsg"];

/** The kernel function a process waits in ("" when running), or null when it is gone. */
function wchan(pid: number): string | null {
  try {
    return fs.readFileSync(`/proc/${pid}/wchan`, "utf8");
  } catch {
    return null;
  }
}

describe("LiveReader.take", () => {
  it("hands over the pieces of a range in order, keeps what is past it, and leaves holes for what it lacks", () => {
    const live = new LiveOutput(100);
    live.offer("stdout", 0, Buffer.from("before")); // no reader yet: nobody gets it
    const reader = live.follow();
    live.offer("stdout", 10, Buffer.from("abcdef"));
    live.offer("stderr", 3, Buffer.from("xy"));
    live.offer("stdout", 20, Buffer.from("ghij"));
    const text = (pieces: Array<{ offset: number; bytes: Buffer }>) =>
      pieces.map((p) => [p.offset, p.bytes.toString()]);
    expect(text(reader.take("stdout", 0, 13))).toEqual([[10, "abc"]]);
    expect(reader.queued).toBe(3 + 2 + 4);
    expect(text(reader.take("stdout", 13, 30))).toEqual([
      [13, "def"],
      [20, "ghij"],
    ]);
    expect(text(reader.take("stderr", 0, 5))).toEqual([[3, "xy"]]);
    expect(reader.queued).toBe(0);
  });
});
