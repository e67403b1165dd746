// sbx port-forward (docs/protocol.md, "Port forwarding"): a server inside a sandbox
// without --network reached from the host through the backend's port-forward route, in
// process through main() (the process boundary is not the point here; Ctrl-C and
// SIGTERM of the real process are test/e2e/port-forward.test.ts's). A port where
// nothing listens and a sandbox that stops are said per connection, the forward goes
// on; the sandbox's removal ends it; bad input is refused before anything listens.

import net from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type LocalHome, localHome, type RunningMain, startMain } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";
import { until } from "../support/wait.js";

/** Connects to 127.0.0.1:port, sends `send` (then half-closes), answers all it read until the other side closed. */
function exchange(port: number, send: string, opts: { halfClose?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    let got = "";
    const s = net.connect({ host: "127.0.0.1", port, allowHalfOpen: true }, () => {
      s.write(send);
      if (opts.halfClose !== false) s.end();
    });
    s.on("data", (c: Buffer) => {
      got += c.toString();
    });
    s.on("error", () => {});
    s.on("close", () => resolve(got));
  });
}

/** The local port a running forward printed for `port` inside. */
async function forwardedPort(run: RunningMain, port: number): Promise<number> {
  const m = await until(
    () => new RegExp(`Forwarding from 127\\.0\\.0\\.1:(\\d+) -> ${port}\\n`).exec(run.io.stderrText()) ?? undefined,
    30_000,
    "the forward to listen",
  );
  return Number(m[1]);
}

const httpGet = "GET / HTTP/1.0\r\nHost: x\r\n\r\n";

describeNeeding(["bwrap", "tools"], "sbx port-forward", () => {
  let h: LocalHome;
  beforeAll(async () => {
    h = await localHome("sbx-pf-");
    expect((await h.sbx(["sandbox", "create", "web", "--isolation", "bwrap"])).code).toBe(0);
    const srv = await h.sbx([
      "process",
      "start",
      "-s",
      "web",
      "--name",
      "srv",
      "--",
      "sh",
      "-c",
      "echo inside > index.html; exec python3 -m http.server 8000 --bind 127.0.0.1",
    ]);
    expect(srv.code, srv.stderr).toBe(0);
  });
  afterAll(async () => {
    await h?.close();
  });

  it("reaches a server in a sandbox without --network from the host; nothing listening is said per connection; Ctrl-C ends it cleanly", async () => {
    const stop = new AbortController();
    const run = startMain(["port-forward", "web", "0:8000", "0:8001"], { home: h.home, interrupt: stop.signal });
    const local = await forwardedPort(run, 8000);
    expect(local).toBeGreaterThan(0);
    // The server may still be starting: asked until it answers.
    const answer = await until(
      async () => {
        const got = await exchange(local, httpGet);
        return got.includes("200") ? got : undefined;
      },
      30_000,
      "the server inside to answer",
    );
    expect(answer).toContain("inside");

    // Nothing listens on 8001 inside: that connection is closed and said, the forward goes on.
    const none = await forwardedPort(run, 8001);
    expect(await exchange(none, "hello")).toBe("");
    await until(() => run.io.stderrText().includes("nothing listens there"), 10_000, "the refusal to be said");
    expect(run.io.stderrText()).toMatch(
      new RegExp(
        `sbx: 127\\.0\\.0\\.1:${none} -> 8001: connection closed: port 8001 in sandbox web: nothing listens there \\(connection refused\\)`,
      ),
    );
    expect(await exchange(local, httpGet)).toContain("inside");

    stop.abort();
    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("sbx: stopped forwarding");
    // Nothing listens any more.
    await expect(
      new Promise((resolve, reject) => net.connect(local, "127.0.0.1", () => resolve("connected")).on("error", reject)),
    ).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("--json: JSON Lines on stdout (listening, each failed connection, stopped), nothing else", async () => {
    const stop = new AbortController();
    const run = startMain(["port-forward", "web", ":8002", "--json"], { home: h.home, interrupt: stop.signal });
    const first = await until(() => run.io.stdoutText().split("\n")[0] || undefined, 30_000, "the listening line");
    const listening = JSON.parse(first) as { event: string; sandbox: string; forwards: Array<{ local_port: number }> };
    expect(listening).toMatchObject({
      event: "listening",
      sandbox: "web",
      sandbox_id: expect.stringMatching(/^sbx_/),
      forwards: [{ address: "127.0.0.1", local_port: expect.any(Number), port: 8002 }],
    });
    expect(await exchange(listening.forwards[0]!.local_port, "x")).toBe("");
    await until(() => run.io.stdoutText().includes("connection_failed"), 10_000, "the failed connection's line");
    stop.abort();
    const r = await run.done;
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.event)).toEqual(["listening", "connection_failed", "stopped"]);
    expect(lines[1]).toMatchObject({ code: "connection_refused", port: 8002 });
    expect(lines[2]).toMatchObject({ reason: "interrupted" });
  });

  it("a sandbox that stops ends its open connections, saying so; new ones are refused until it runs; its removal ends the forward", async () => {
    expect((await h.sbx(["sandbox", "create", "held", "--isolation", "bwrap"])).code).toBe(0);
    // A server that greets and holds its one connection open.
    const hold =
      "import socket,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1',9000))\ns.listen()\nwhile True:\n  c,_=s.accept()\n  c.sendall(b'hi\\n')\n  time.sleep(0.1)\n";
    expect((await h.sbx(["process", "start", "-s", "held", "--", "python3", "-c", hold])).code).toBe(0);
    const stop = new AbortController();
    const run = startMain(["port-forward", "held", "0:9000"], { home: h.home, interrupt: stop.signal });
    const local = await forwardedPort(run, 9000);
    const greeted = await until(
      () =>
        new Promise<{ socket: net.Socket; closed: Promise<void> } | undefined>((resolve) => {
          const socket = net.connect(local, "127.0.0.1");
          const closed = new Promise<void>((r) => socket.once("close", () => r()));
          socket.on("error", () => {});
          socket.once("data", () => resolve({ socket, closed }));
          socket.once("close", () => resolve(undefined));
        }),
      30_000,
      "the server inside to greet",
    );
    const stopped = await h.sbx(["sandbox", "stop", "held"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    await greeted.closed;
    await until(
      () => run.io.stderrText().includes("connection ended: the sandbox stopped"),
      10_000,
      "the end to be said",
    );
    // Still forwarding: a new connection is refused, saying the sandbox does not run.
    expect(await exchange(local, "x")).toBe("");
    await until(() => run.io.stderrText().includes("is not running"), 10_000, "the refusal to be said");
    expect(run.io.stderrText()).toMatch(
      /-> 9000: connection closed: sandbox held is not running: nothing in it listens on port 9000/,
    );

    expect((await h.sbx(["sandbox", "rm", "held", "--force"])).code).toBe(0);
    expect(await exchange(local, "x")).toBe("");
    const r = await run.done;
    expect(r.code).toBe(125);
    expect(r.stderr).toMatch(/sbx: stopped forwarding: sandbox held was removed/);
  });

  it("bad input is refused before anything listens (exit 125)", async () => {
    for (const [args, said] of [
      [["port-forward", "web", "70000"], /invalid port "70000"/],
      [["port-forward", "web", "a:8000"], /invalid port "a:8000": the local port/],
      [["port-forward", "web", "1:2:3"], /invalid port "1:2:3"/],
      [["port-forward", "web", "0"], /the sandbox port must be a number from 1 to 65535/],
      [["port-forward", "--address", "example.com", "web", "8000"], /invalid --address "example.com"/],
      [["port-forward", "nosuch", "8000"], /nosuch/],
      [["port-forward", "web"], /missing required argument 'ports'/],
    ] as const) {
      const r = await h.sbx(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(125);
      expect(r.stderr).toMatch(said);
      expect(r.stdout).toBe("");
    }
    // A local port in use.
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const r = await h.sbx(["port-forward", "web", `${port}:8000`]);
    taken.close();
    expect(r.code).toBe(125);
    expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the address is in use`);
  });
});
