// What a command costs the backend and the receipt store. A warm `sbx exec`: the
// request goes straight to the local daemon's socket (no health check first), and the
// store is written exactly twice, once before dispatch and once with the answer.
// `sbx logs` and `sbx process logs` read output raw (no base64 in JSON), byte for byte.
// In-process through main() against a real backend on the home's socket.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { ProcessesApi } from "../../src/client/processes.js";
import { resolvePaths } from "../../src/config/paths.js";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";

/** Every method of the store that writes (each is one committed transaction). */
const WRITES = ["createForDispatch", "beginAttempt", "recordObservation", "noteExecutionId", "prune"] as const;

let home: string;
let backend: BackendHandle;
const requests: string[] = [];

beforeAll(async () => {
  home = makeHome("sbx-exec-path-");
  backend = await startHomeBackend(home, {
    log: (line) => {
      const m = /\b(GET|POST|PUT|DELETE) (\S+) \d{3}\b/.exec(line);
      if (m) requests.push(`${m[1]} ${m[2]}`);
    },
  });
});
afterAll(async () => {
  await backend.close();
  removeHome(home);
});
afterEach(() => vi.restoreAllMocks());

async function sbx(argv: string[]) {
  const io = createBufferIO();
  const code = await main(argv, io, { SBX_HOME: home });
  return { code, out: io.stdoutText(), bytes: io.stdoutBytes(), errBytes: io.stderrBytes(), err: io.stderrText() };
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("a warm exec on the local profile", () => {
  it("sends one request (no health check) and writes the store twice: before dispatch, and the answer", async () => {
    expect((await sbx(["exec", "--", "true"])).code).toBe(0); // the default sandbox exists from here on
    // The backend logs a request once its answer is sent: wait for the warm-up's before counting.
    await vi.waitFor(() => expect(requests).toContain("POST /api/v1/sandbox/default/execute"), { timeout: 10_000 });
    const writes = WRITES.map((name) => vi.spyOn(ReceiptStore.prototype, name));
    requests.length = 0;
    const r = await sbx(["exec", "--", "echo", "hello"]);
    expect(r, r.err).toMatchObject({ code: 0, out: "hello\n" });
    await vi.waitFor(() => expect(requests.length).toBeGreaterThan(0), { timeout: 10_000 });
    expect(requests).toEqual(["POST /api/v1/sandbox/default/execute"]);
    const calls = Object.fromEntries(WRITES.map((name, i) => [name, writes[i]!.mock.calls.length]));
    expect(calls).toEqual({
      createForDispatch: 1,
      beginAttempt: 0,
      recordObservation: 1,
      noteExecutionId: 0,
      prune: 0,
    });
    // The answer is written after the dispatch marker, never before.
    expect(writes[0]!.mock.invocationCallOrder[0]!).toBeLessThan(writes[2]!.mock.invocationCallOrder[0]!);
  });
});

describe("sbx logs of a finished execution", () => {
  const workspace = () => path.join(resolvePaths({ SBX_HOME: home }).daemonDir, "sandboxes");

  it("that wrote one stream: its full output read raw, byte for byte, without the event log", async () => {
    // 7 MiB that are not UTF-8: past the record's tail and the 5 MiB event budget.
    const made = await sbx(["exec", "--", "sh", "-c", "head -c 7340032 /dev/urandom > big.bin"]);
    expect(made.code, made.err).toBe(0);
    const ran = await sbx(["exec", "--json", "--", "cat", "big.bin"]);
    const doc = JSON.parse(ran.out) as ReceiptDocument;
    const file = fs
      .readdirSync(workspace(), { recursive: true, encoding: "utf8" })
      .map((f) => path.join(workspace(), f))
      .find((f) => f.endsWith(`${path.sep}big.bin`))!;
    const want = fs.readFileSync(file);
    const output = `GET /api/v1/sandbox/default/executions/${doc.execution_id}/output`;
    // exec --json asked how much of its cut stdout was kept (one raw read of a byte, left
    // once its headers came): the backend logs it when that answer ends, which may be
    // after exec has exited. Wait for it before counting the reads of logs.
    expect(doc.stdout_truncated).toBe(true);
    await vi.waitFor(() => expect(requests).toContain(output), { timeout: 10_000 });
    requests.length = 0;
    const r = await sbx(["logs", doc.execution_id!]);
    expect(r.code, r.err).toBe(0);
    expect(r.bytes.length).toBe(want.length);
    expect(sha(r.bytes)).toBe(sha(want));
    // Two raw reads of the full output (stderr is empty and it is over; then stdout), nothing
    // else. The backend logs a request once its answer is sent: wait for both lines.
    await vi.waitFor(() => expect(requests.filter((q) => q === output)).toHaveLength(2), { timeout: 10_000 });
    expect(requests.filter((q) => !q.startsWith("POST "))).toEqual([output, output]);
  });

  it("that wrote both streams: replayed from the event log (their order kept), each byte for byte", async () => {
    const ran = await sbx(["exec", "--json", "--", "sh", "-c", "echo one; echo two >&2; echo three"]);
    const doc = JSON.parse(ran.out) as ReceiptDocument;
    requests.length = 0;
    const r = await sbx(["logs", doc.execution_id!]);
    expect(r).toMatchObject({ code: 0, out: "one\nthree\n", err: "two\n" });
    await vi.waitFor(() => expect(requests.some((q) => q.includes("/events"))).toBe(true), { timeout: 10_000 });
  });
});

describe("sbx logs of an output past the backend's cap", () => {
  it("prints what was kept and says how many bytes were not", async () => {
    const other = makeHome("sbx-exec-path-cap-");
    const capped = await startHomeBackend(other, { executionOutputMaxBytes: 64 * 1024, eventOutputBudget: 16 * 1024 });
    try {
      const run = async (argv: string[]) => {
        const io = createBufferIO();
        const code = await main(argv, io, { SBX_HOME: other });
        return { code, bytes: io.stdoutBytes(), err: io.stderrText() };
      };
      const ran = await run(["exec", "--json", "--", "sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' y"]);
      const eid = (JSON.parse(ran.bytes.toString("utf8")) as ReceiptDocument).execution_id!;
      const r = await run(["logs", eid]);
      expect(r.code, r.err).toBe(0);
      expect(r.bytes.equals(Buffer.alloc(64 * 1024, "y"))).toBe(true);
      expect(r.err).toContain(`${1_000_000 - 64 * 1024} bytes of stdout at offset ${64 * 1024} were not kept`);
    } finally {
      await capped.close();
      removeHome(other);
    }
  });
});

describe("sbx process logs", () => {
  it("reads raw (no base64 in JSON), byte for byte, following to the end", async () => {
    const started = await sbx([
      "process",
      "start",
      "--",
      "sh",
      "-c",
      "head -c 3000000 /dev/zero | tr '\\0' x; printf '\\377end'",
    ]);
    expect(started.code, started.err).toBe(0);
    const id = started.out.trim();
    const json = vi.spyOn(ProcessesApi.prototype, "readLogsFrom");
    const raw = vi.spyOn(ProcessesApi.prototype, "openLogs");
    const r = await sbx(["process", "logs", id, "-f", "--raw", "--verbose"]);
    expect(r.code, r.err).toBe(0);
    expect(r.bytes.length).toBe(3_000_004);
    expect(r.bytes.subarray(0, 3_000_000).every((c) => c === 0x78)).toBe(true);
    expect(r.bytes.subarray(3_000_000).equals(Buffer.from([0xff, ...Buffer.from("end")]))).toBe(true);
    expect(json).not.toHaveBeenCalled();
    expect(raw).toHaveBeenCalled();
    expect(r.err).toContain(`next offset stdout ${3_000_004}, stderr 0`);
  });
});
