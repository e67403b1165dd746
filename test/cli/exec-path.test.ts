// What a warm `sbx exec` costs the backend and the receipt store: the request goes
// straight to the local daemon's socket (no health check first), and the store is
// written exactly twice, once before dispatch and once with the answer. In-process
// through main() against a real backend on the home's socket.

import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { BackendHandle } from "../../src/backend/server.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
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
  return { code, out: io.stdoutText(), err: io.stderrText() };
}

describe("a warm exec on the local profile", () => {
  it("sends one request (no health check) and writes the store twice: before dispatch, and the answer", async () => {
    expect((await sbx(["exec", "--", "true"])).code).toBe(0); // the default sandbox exists from here on
    const writes = WRITES.map((name) => vi.spyOn(ReceiptStore.prototype, name));
    requests.length = 0;
    const r = await sbx(["exec", "--", "echo", "hello"]);
    expect(r, r.err).toMatchObject({ code: 0, out: "hello\n" });
    await vi.waitFor(() => expect(requests.length).toBeGreaterThan(0));
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
