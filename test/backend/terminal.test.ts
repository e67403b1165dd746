// The terminal route (docs/protocol.md, "Terminals"): an execution run with `tty` on a
// terminal of the sandbox's, attached to over a WebSocket on the Unix socket and on
// TCP with the token — output from an offset, input, resizes, the exit; the last
// client attached wins; a dropped connection leaves the program running; a slow
// client never stops the program (its transcript is read from disk at its pace). Each
// on both drivers: `none`, and bwrap, whose terminals the sandbox's init opens inside it.

import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { startTestBackend, type TestBackend, until } from "./support.js";
import { describeNeeding, type Need } from "../support/requirements.js";
import { openWebSocket } from "../support/websocket.js";

const TOKEN = "terminal-test-token-0123456789abcdef";

interface Attached {
  ws: WebSocket;
  /** Binary output, in order. */
  output(): string;
  /** Text (control) messages, parsed. */
  control: Array<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
}

/** A client of the terminal route; rejects with the HTTP status and body when refused. */
async function attach(url: string, headers: Record<string, string> = {}): Promise<Attached> {
  const c = await openWebSocket(url, headers);
  return {
    ws: c.ws,
    output: () => c.binary().toString("latin1"),
    get control() {
      return c.text.map((t) => JSON.parse(t) as Record<string, unknown>);
    },
    closed: c.closed,
  };
}

type Isolation = "none" | "bwrap";
const needs = (isolation: Isolation): Need[] => (isolation === "none" ? ["pty"] : ["pty", "bwrap"]);

for (const isolation of ["none", "bwrap"] as const) {
  describeNeeding(needs(isolation), `terminals of executions (isolation ${isolation})`, () => {
    let b: TestBackend;
    let port: number;

    beforeAll(async () => {
      b = await startTestBackend({ listen: { host: "127.0.0.1", port: 0 }, token: TOKEN });
      port = b.handle.port!;
      const created = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "default", isolation } });
      expect(created.status, created.text).toBe(201);
    });
    afterAll(async () => {
      await b?.stop();
    });

    const unixUrl = (eid: string, query = "") =>
      `ws+unix://${b.socketPath}:/api/v1/sandbox/default/executions/${eid}/terminal${query}`;

    let keys = 0;
    /** Starts a command on a terminal (its answer comes at its end); answers its execution id once admitted. */
    async function startOnTerminal(command: string, size = { cols: 80, rows: 24 }, timeout = 120_000): Promise<string> {
      const key = `terminal-${process.pid}-${++keys}`;
      void b.api("POST", "/api/v1/sandbox/default/execute", {
        body: { command: ["/bin/sh", "-c", command], tty: size, timeout },
        headers: { "idempotency-key": key },
      });
      return until(
        async () => {
          const list = await b.api("GET", `/api/v1/sandbox/default/executions?idempotency_key=${key}`);
          return list.json.executions[0]?.execution_id as string | undefined;
        },
        30_000,
        "the execution to be admitted",
      );
    }

    it("output from offset 0, input typed, a resize followed, then the exit and a normal close", async () => {
      const eid = await startOnTerminal("tty; stty size; read line; stty size; echo got:$line; exit 7", {
        cols: 100,
        rows: 30,
      });
      const t = await attach(unixUrl(eid, "?offset=0"));
      await until(() => /30 100/.test(t.output()), 30_000, "the size asked for");
      expect(t.output()).toMatch(/^\/dev\/pts\/\d+\r\n30 100\r\n/);
      expect(t.control[0]).toEqual({ type: "attached", offset: 0, execution_id: eid });
      t.ws.send(JSON.stringify({ type: "resize", cols: 132, rows: 43 }));
      // The resize is taken before the line that follows it is read.
      await sleep(0);
      t.ws.send(Buffer.from("hello\r"));
      expect(await t.closed).toEqual({ code: 1000, reason: "exited" });
      expect(t.output()).toContain("43 132\r\ngot:hello\r\n");
      expect(t.control.at(-1)).toMatchObject({ type: "exit", outcome: "failed", exit_code: 7, signal: null });
      const record = await b.api("GET", `/api/v1/sandbox/default/executions/${eid}`);
      expect(record.json).toMatchObject({ outcome: "failed", exit_code: 7, tty: true, stderr: "" });
      expect(record.json.stdout).toContain("got:hello");
    });

    it("a dropped connection leaves the program running; attaching again replays it and types on", async () => {
      const eid = await startOnTerminal("echo first-$((1+1)); read line; echo second:$line");
      const one = await attach(unixUrl(eid, "?offset=0"));
      await until(() => one.output().includes("first-2"), 30_000, "the first line");
      one.ws.terminate();
      await one.closed;
      const record = await b.api("GET", `/api/v1/sandbox/default/executions/${eid}`);
      expect(record.json.outcome).toBe("pending");
      const two = await attach(unixUrl(eid, "?offset=0"));
      await until(() => two.output().includes("first-2"), 30_000, "the replay");
      two.ws.send(Buffer.from("again\r"));
      await two.closed;
      expect(two.output()).toContain("second:again");
      // Without an offset, a client starts at the transcript's end.
      const ended = await attach(unixUrl(eid));
      expect(ended.control[0]).toMatchObject({ type: "attached" });
      await ended.closed;
      expect(ended.output()).toBe("");
      expect(ended.control.at(-1)).toMatchObject({ type: "exit", outcome: "succeeded", exit_code: 0 });
    });

    it("the last client to attach wins: the one before is told and closed", async () => {
      const eid = await startOnTerminal("read line; echo line:$line");
      const first = await attach(unixUrl(eid));
      const second = await attach(unixUrl(eid));
      expect(await first.closed).toEqual({ code: 4000, reason: "attached elsewhere" });
      expect(first.control.at(-1)).toEqual({ type: "detached", reason: "another client attached to this terminal" });
      second.ws.send(Buffer.from("mine\r"));
      await second.closed;
      expect(second.output()).toContain("line:mine");
    });

    it("over TCP only with the token", async () => {
      const eid = await startOnTerminal("read line; echo tcp:$line");
      const url = `ws://127.0.0.1:${port}/api/v1/sandbox/default/executions/${eid}/terminal?offset=0`;
      await expect(attach(url)).rejects.toMatchObject({ status: 401 });
      const t = await attach(url, { authorization: `Bearer ${TOKEN}` });
      t.ws.send(Buffer.from("yes\r"));
      await t.closed;
      expect(t.output()).toContain("tcp:yes");
    });

    it("a slow client never holds the program up: it ends meanwhile, and the client reads the transcript later, in order, from disk", async () => {
      const bytes = 1024 * 1024;
      const eid = await startOnTerminal(`stty raw -echo; head -c ${bytes} /dev/zero | tr '\\0' x`);
      const t = await attach(unixUrl(eid, "?offset=0"));
      // The client reads nothing while the program writes all of it (into its transcript on disk) and ends.
      t.ws.pause();
      const record = await until(
        async () => {
          const r = await b.api("GET", `/api/v1/sandbox/default/executions/${eid}`);
          return r.json.outcome !== "pending" && r.json;
        },
        240_000,
        "the program to end while its client reads nothing",
      );
      expect(record).toMatchObject({ outcome: "succeeded", stdout_truncated: false });
      t.ws.resume();
      await t.closed;
      // Every byte the program wrote, in order: none lost as it exited (docs/drivers.md,
      // "Terminals": the PTY seam reads what the terminal still holds before its reader goes).
      expect(record.stdout_bytes).toBe(bytes);
      expect(t.output()).toBe("x".repeat(bytes));
      expect(t.control.at(-1)).toMatchObject({ type: "exit", outcome: "succeeded" });
    }, 600_000);

    // Only the sandbox can tell a program under its own /tmp is missing: its init says so.
    if (isolation === "bwrap")
      it("a program the sandbox does not have: 127, said on the terminal, and the backend goes on", async () => {
        const res = await b.api("POST", "/api/v1/sandbox/default/execute", {
          body: { command: ["/tmp/not-here-sbx"], tty: { cols: 80, rows: 24 } },
        });
        expect(res.status, res.text).toBe(200);
        expect(res.json).toMatchObject({ exit_code: 127, stderr: "" });
        expect(res.json.stdout).toContain("sbx: /tmp/not-here-sbx: command not found");
        const after = await b.api("POST", "/api/v1/sandbox/default/execute", { body: { command: ["true"] } });
        expect(after.json.exit_code).toBe(0);
      });

    it("refusals: a plain GET (426), a command not on a terminal (409), an offset past the end (422), bad tty and resize input", async () => {
      const plain = await b.api("POST", "/api/v1/sandbox/default/execute", { body: { command: ["true"] } });
      const eid = plain.json.execution_id as string;
      const get = await b.api("GET", `/api/v1/sandbox/default/executions/${eid}/terminal`);
      expect(get.status).toBe(426);
      expect(get.json.error.code).toBe("upgrade_required");
      await expect(attach(unixUrl(eid))).rejects.toMatchObject({
        status: 409,
        body: expect.stringContaining("not_a_terminal"),
      });
      const tty = await startOnTerminal("read line");
      await expect(attach(unixUrl(tty, "?offset=999999"))).rejects.toMatchObject({ status: 422 });
      await expect(attach(unixUrl("exe_0000000000000000"))).rejects.toMatchObject({ status: 404 });
      const bad = await attach(unixUrl(tty));
      bad.ws.send(JSON.stringify({ type: "resize", cols: 0, rows: 10 }));
      expect((await bad.closed).code).toBe(1008);
      await b.api("POST", `/api/v1/sandbox/default/executions/${tty}/cancel`, { body: {} });
      for (const body of [
        { command: ["true"], tty: { cols: 80 } },
        { command: ["true"], tty: { cols: 80, rows: 24 }, stdin: "aGk=" },
        { command: ["true"], timeout: 700_000 },
      ]) {
        const res = await b.api("POST", "/api/v1/sandbox/default/execute", { body });
        expect(res.status, JSON.stringify(body)).toBe(400);
      }
      const long = await b.api("POST", "/api/v1/sandbox/default/execute", {
        body: { command: ["true"], tty: { cols: 80, rows: 24 }, timeout: 700_000 },
      });
      expect(long.status).toBe(200);
    });
  });

  describeNeeding(needs(isolation), `terminals of supervised processes (isolation ${isolation})`, () => {
    let b: TestBackend;
    beforeAll(async () => {
      b = await startTestBackend();
      const created = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "default", isolation } });
      expect(created.status, created.text).toBe(201);
    });
    afterAll(async () => {
      await b?.stop();
    });

    it("each run gets a terminal of its own: output flows across a restart, keys go to the current run, stdin types at it, the end is the exit", async () => {
      const started = await b.api("POST", "/api/v1/sandbox/default/processes", {
        body: {
          name: "repl",
          command: ["/bin/sh", "-c", 'tty; echo "run-$SBX_PROCESS_GENERATION"; read line; echo "got:$line"; exit 1'],
          tty: { cols: 90, rows: 20 },
          restart: { policy: "on-failure", max_restarts: 1, backoff_ms: 50 },
        },
      });
      expect(started.status, started.text).toBe(201);
      expect(started.json).toMatchObject({ tty: true, stdin_enabled: true });
      const pid = started.json.process_id as string;
      const url = (query = "") => `ws+unix://${b.socketPath}:/api/v1/sandbox/default/processes/${pid}/terminal${query}`;
      const t = await attach(url("?offset=0"));
      expect(t.control[0]).toEqual({ type: "attached", offset: 0, process_id: pid });
      await until(() => /\/dev\/pts\/\d+\r\nrun-0\r\n/.test(t.output()), 30_000, "the first run");
      t.ws.send(Buffer.from("one\r"));
      // The first run ends (1) and its policy starts the second, on a new terminal.
      await until(() => /got:one\r\n[\s\S]*run-1\r\n/.test(t.output()), 30_000, "the second run");
      // A client attached anew is attached to the second run.
      const again = await attach(url());
      expect(await t.closed).toEqual({ code: 4000, reason: "attached elsewhere" });
      const typed = await b.api("POST", `/api/v1/sandbox/default/processes/${pid}/stdin`, {
        body: { data: Buffer.from("two\r").toString("base64") },
      });
      expect(typed.status, typed.text).toBe(200);
      expect(await again.closed).toEqual({ code: 1000, reason: "exited" });
      expect(again.output()).toContain("got:two");
      expect(again.control.at(-1)).toMatchObject({ type: "exit", outcome: "failed", exit_code: 1 });
      const record = await b.api("GET", `/api/v1/sandbox/default/processes/${pid}`);
      expect(record.json).toMatchObject({ state: "exited", restarts: 1, end_reason: "max_restarts" });
    });

    it("a process not on a terminal is not attached to (409)", async () => {
      const started = await b.api("POST", "/api/v1/sandbox/default/processes", { body: { command: ["sleep", "30"] } });
      const pid = started.json.process_id as string;
      await expect(
        attach(`ws+unix://${b.socketPath}:/api/v1/sandbox/default/processes/${pid}/terminal`),
      ).rejects.toMatchObject({ status: 409 });
      await b.api("DELETE", `/api/v1/sandbox/default/processes/${pid}?grace_ms=100`);
    });
  });
}

describeNeeding("bwrap", "terminals where node-pty's addon is not there (Node)", () => {
  let b: TestBackend;
  beforeAll(async () => {
    // An installation whose addon was never built: the driver is told an addon that is not there.
    b = await startTestBackend({ drivers: { bwrap: { terminalAddon: "/nonexistent/node-pty/pty.node" } } });
    const created = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "default", isolation: "bwrap" } });
    expect(created.status, created.text).toBe(201);
  });
  afterAll(async () => {
    await b?.stop();
  });

  it("refuses a command or a process on a terminal (422 terminal_unavailable, saying why); nothing runs, plain commands do", async () => {
    const tty = { cols: 80, rows: 24 };
    for (const route of ["execute", "processes"]) {
      const refused = await b.api("POST", `/api/v1/sandbox/default/${route}`, { body: { command: ["true"], tty } });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.json.error).toMatchObject({
        code: "terminal_unavailable",
        details: { isolation: "bwrap", reason: expect.stringContaining("/nonexistent/node-pty/pty.node is not there") },
      });
    }
    expect((await b.api("GET", "/api/v1/sandbox/default/processes")).json.processes).toEqual([]);
    const plain = await b.api("POST", "/api/v1/sandbox/default/execute", { body: { command: ["echo", "fine"] } });
    expect(plain.json).toMatchObject({ outcome: "succeeded", stdout: "fine\n" });
  });
});
