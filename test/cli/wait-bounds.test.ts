// Every wait of the CLI is bounded and says what it waited for (issue 30, item 4;
// src/cli/wait-bounds.ts): `jobs wait` and `jobs submit --wait` without --timeout stop
// at the default bound (1 h, seen with the clock moved past it, never slept through)
// with 124; `receipts wait` stops when the backend answers a failure 3 times in a row,
// saying its answer. In-process through main().

import diagnostics from "node:diagnostics_channel";
import fs from "node:fs";
import type { ClientRequest } from "node:http";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { JOBS_WAIT_DEFAULT_MS, SERVER_ERRORS_IN_A_ROW } from "../../src/cli/wait-bounds.js";
import { startTestBackend, type TestBackend, workspaceOf } from "../backend/support.js";
import { makeHome, removeHome } from "../support/cli.js";
import { type MisbehavingServer, startMisbehavingServer } from "../support/misbehaving-server.js";

let home: string;
beforeAll(() => {
  home = makeHome("sbx-wait-bounds-");
});
afterAll(() => removeHome(home));

async function sbx(argv: string[], env: Record<string, string> = {}, stdin?: string) {
  // On a terminal: what a wait waits for is said there.
  const io = createBufferIO({ ...(stdin !== undefined && { stdin }), tty: true });
  const code = await main(argv, io, { SBX_HOME: home, ...env });
  return { code, out: io.stdoutText(), err: io.stderrText() };
}

describe("jobs waits without --timeout", () => {
  let b: TestBackend;
  let ws: string;
  beforeAll(async () => {
    b = await startTestBackend();
    ws = await workspaceOf(b);
  });
  afterAll(() => b.stop());
  afterEach(() => restoreClock());

  /** Once the wait's first read of a job starts, the clock is moved past the default bound. */
  let from = 0;
  const movePastBound = (message: unknown) => {
    const { request } = message as { request: ClientRequest };
    if (request.method === "GET" && request.path.includes("/jobs/")) vi.setSystemTime(from + JOBS_WAIT_DEFAULT_MS + 1);
  };
  function restoreClock(): void {
    diagnostics.unsubscribe("http.client.request.start", movePastBound);
    vi.useRealTimers();
  }
  function clockMovesOnFirstRead(): void {
    vi.useFakeTimers({ toFake: ["Date"] });
    from = Date.now();
    diagnostics.subscribe("http.client.request.start", movePastBound);
  }

  /** A job that ends once the file exists in the workspace (its working directory). */
  const hold = (file: string) => `while [ ! -e ${file} ]; do sleep 0.02; done`;
  const env = () => ({ SBX_API_URL: `unix:${b.socketPath}` });

  it("jobs wait: says what it waits for and for how long, and stops at the default bound with 124", async () => {
    const submitted = await sbx(
      ["jobs", "submit", "-", "--json"],
      env(),
      JSON.stringify({ request_id: "bound-1", jobs: [{ name: "held", command: hold("go-1") }] }),
    );
    expect(submitted.code, submitted.err).toBe(0);
    const [job] = JSON.parse(submitted.out).jobs as Array<{ job_id: string }>;
    clockMovesOnFirstRead();
    const r = await sbx(["jobs", "wait", job!.job_id], env());
    restoreClock();
    expect(r.code, r.err).toBe(124);
    expect(r.err).toContain("sbx: waiting up to 1h (the default bound; --timeout to change) for 1 job to end");
    expect(r.err).toContain(
      `sbx: stopped waiting after 1h (the default bound; --timeout to change); nothing was cancelled, the jobs keep running. Wait again: sbx jobs wait ${job!.job_id}`,
    );
    fs.writeFileSync(path.join(ws, "go-1"), "");
    expect((await sbx(["jobs", "wait", job!.job_id, "--timeout", "30s"], env())).code).toBe(0);
  });

  it("jobs submit --wait: the same bound, the same end", async () => {
    clockMovesOnFirstRead();
    const r = await sbx(
      ["jobs", "submit", "-", "--wait"],
      env(),
      JSON.stringify({ request_id: "bound-2", jobs: [{ name: "held", command: hold("go-2") }] }),
    );
    restoreClock();
    expect(r.code, r.err).toBe(124);
    expect(r.err).toContain("sbx: waiting up to 1h (the default bound; --timeout to change) for ");
    expect(r.err).toContain("Wait again: sbx jobs wait --request bound-2");
    fs.writeFileSync(path.join(ws, "go-2"), "");
    expect((await sbx(["jobs", "wait", "--request", "bound-2", "--timeout", "30s"], env())).code).toBe(0);
  });

  it("an explicit --timeout is said as given", async () => {
    const r = await sbx(
      ["jobs", "submit", "-", "--wait", "--timeout", "100ms"],
      env(),
      JSON.stringify({ request_id: "bound-3", jobs: [{ name: "held", command: hold("go-3") }] }),
    );
    expect(r.code, r.err).toBe(124);
    expect(r.err).toContain("sbx: waiting up to 100ms (--timeout to change) for ");
    expect(r.err).toContain("sbx: stopped waiting after 100ms (--timeout to change)");
    fs.writeFileSync(path.join(ws, "go-3"), "");
    expect((await sbx(["jobs", "wait", "--request", "bound-3", "--timeout", "30s"], env())).code).toBe(0);
  });
});

describe("receipts wait against a backend that answers 500 to every read", () => {
  let server: MisbehavingServer;
  beforeAll(async () => {
    server = await startMisbehavingServer({
      kind: "json",
      status: 500,
      body: { error: { code: "internal_error", message: "database disk image is malformed" } },
    });
  });
  afterAll(() => server.close());

  it(`stops after ${SERVER_ERRORS_IN_A_ROW} in a row, saying the answer, long before its bound`, async () => {
    const exec = await sbx(["exec", "--api-url", server.url, "--json", "--", "true"]);
    expect(exec.code).toBe(255);
    const receipt = JSON.parse(exec.out) as { receipt_id: string; classification: string };
    const before = server.requests.length;
    const waited = await sbx(["receipts", "wait", receipt.receipt_id]);
    expect(waited.code, waited.err).toBe(255);
    expect(server.requests.length - before).toBe(SERVER_ERRORS_IN_A_ROW);
    expect(waited.err).toContain(
      `sbx: stopped waiting: the backend answered 500 internal_error: database disk image is malformed ${SERVER_ERRORS_IN_A_ROW} times in a row; ${receipt.receipt_id} is still ${receipt.classification}`,
    );
    expect(waited.err).toContain("sbx: waiting up to 15m");
  });
});
