// Transport failures said in sbx's words on both runtimes (issue 30, item 13): a
// backend that drops the connection after reading the request is "the connection was
// closed before the answer was complete (ECONNRESET)" in the receipt and on stderr,
// never Node's "read ECONNRESET" / "socket hang up" nor Bun's "pass `verbose: true` in
// the second argument to fetch()". Spawned (bin/sbx, or the release binary when
// SBX_TEST_BINARY names one): the runtime's HTTP client is the point.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { makeHome, removeHome, runSbx } from "../support/cli.js";
import {
  type Behaviour,
  behaviours,
  type MisbehavingServer,
  startMisbehavingServer,
} from "../support/misbehaving-server.js";

const CLOSED = "the connection was closed before the answer was complete (ECONNRESET)";
/** What the runtimes say of it themselves. */
const LEAKS = [/verbose: true/, /fetch\(\)/, /socket hang up/, /read ECONNRESET/, /other side closed/];

let home: string;
let server: MisbehavingServer;

beforeAll(async () => {
  home = makeHome("sbx-transport-words-");
  server = await startMisbehavingServer();
});
afterAll(async () => {
  await server.close();
  removeHome(home);
});

describe.each([
  ["resets the connection", behaviours.reset],
  ["closes the connection", behaviours.close],
] as Array<[string, () => Behaviour]>)("a backend that %s after reading the request", (_, behaviour) => {
  it("is said in sbx's words, in the receipt and on stderr", async () => {
    server.setBehaviour(behaviour());
    const r = await runSbx(["exec", "--json", "--api-url", server.url, "--", "echo", "hi"], { home });
    expect(r.code, r.stderr).toBe(255);
    const doc = JSON.parse(r.stdout) as ReceiptDocument;
    expect(doc.classification).toBe("outcome_unknown");
    expect(doc.error).toEqual({ code: "ECONNRESET", message: CLOSED });
    for (const leak of LEAKS) {
      expect(r.stderr).not.toMatch(leak);
      expect(r.stdout).not.toMatch(leak);
    }
  });
});
