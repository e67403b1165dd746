// receipts wait against a backend that answers `pending` at once, ignoring wait_ms:
// reads start at least a second apart and back off, whatever the backend does. When a
// read starts is seen where sbx starts it (node:http's diagnostics channel, in this
// process), not when it reaches the server: delivery times vary with the machine's load.

import diagnostics from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { nextReadGap, READ_PACE_MIN_MS } from "../../src/cli/observe.js";
import { makeHome, removeHome } from "../support/cli.js";
import { executionRecord, type MisbehavingServer, startMisbehavingServer } from "../support/misbehaving-server.js";

let home: string;
let server: MisbehavingServer;
const readsAt: number[] = [];
/** node:http announces each request as it is created, before a byte is sent. */
const onRequest = (message: unknown) => {
  const { request } = message as { request: ClientRequest };
  if (request.method === "GET" && request.getHeader("host") === new URL(server.url).host) readsAt.push(Date.now());
};
beforeEach(async () => {
  home = makeHome("sbx-pace-");
  readsAt.length = 0;
  diagnostics.subscribe("http.client.request.start", onRequest);
  server = await startMisbehavingServer((req) => {
    const pending = executionRecord(req, {
      execution_id: "exe_pace1",
      outcome: "pending",
      exit_code: null,
      finished_at: null,
    });
    return { kind: "json", status: 200, body: pending };
  });
});
afterEach(async () => {
  diagnostics.unsubscribe("http.client.request.start", onRequest);
  await server.close();
  removeHome(home);
});

async function sbx(argv: string[]) {
  const io = createBufferIO();
  const code = await main(argv, io, { SBX_HOME: home });
  return { code, out: io.stdoutText(), err: io.stderrText() };
}

describe("receipts wait paces its reads", () => {
  it("at least a second apart, backing off, against a backend that answers at once", async () => {
    const exec = await sbx(["exec", "--api-url", server.url, "--json", "--", "sleep", "100"]);
    expect(exec.code).toBe(255);
    const receipt = JSON.parse(exec.out) as { receipt_id: string; classification: string };
    expect(receipt.classification).toBe("running");

    const waited = await sbx(["receipts", "wait", receipt.receipt_id, "--timeout", "5s"]);
    expect(waited.code).toBe(255);
    expect(waited.err).toContain("stopped waiting after 5s");
    expect(readsAt.length).toBeGreaterThanOrEqual(2);
    const gaps = readsAt.slice(1).map((t, i) => t - readsAt[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(READ_PACE_MIN_MS - 5);
    // Backing off while nothing changes: a gap reaches the next step of the back-off. (A busy
    // machine only lengthens gaps, and a read slow enough restarts the back-off, so the
    // gaps' order is not asserted; on a quiet one a constant pace never gets there.)
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(nextReadGap(READ_PACE_MIN_MS) - 5);
    expect(readsAt.length).toBeLessThanOrEqual(6);
  });
});
