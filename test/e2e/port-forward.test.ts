// sbx port-forward as a real process (the release binary when TEST_BINARY says so):
// SIGTERM and Ctrl-C (SIGINT) end it cleanly — exit 0, said, the local port released
// — while a connection through it is open. What it forwards and says per connection
// is test/cli/port-forward.test.ts's.

import net from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { collect, spawnSbx } from "../support/cli.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";
import { until } from "../support/wait.js";

describeNeeding(["bwrap", "tools"], "sbx port-forward, the process", () => {
  let h: LocalHome;
  beforeAll(async () => {
    h = await localHome("sbx-e2e-pf-");
    expect((await h.sbx(["sandbox", "create", "web", "--isolation", "bwrap"])).code).toBe(0);
    // Greets each connection and holds it open.
    const hold =
      "import socket,threading,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1',7000))\ns.listen()\nkept=[]\nwhile True:\n  c,_=s.accept()\n  c.sendall(b'hi')\n  kept.append(c)\n";
    expect((await h.sbx(["process", "start", "-s", "web", "--", "python3", "-c", hold])).code).toBe(0);
  });
  afterAll(async () => {
    await h?.close();
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} ends it cleanly with a connection open: exit 0, said, the port released`, async () => {
      const child = spawnSbx(["port-forward", "web", ":7000"], { home: h.home });
      let stderr = "";
      child.stderr?.on("data", (c: Buffer) => {
        stderr += c.toString();
      });
      const done = collect(child, 60_000, `sbx port-forward (${signal})`);
      const m = await until(
        () => /Forwarding from 127\.0\.0\.1:(\d+) -> 7000\n/.exec(stderr) ?? undefined,
        30_000,
        "the forward to listen",
      );
      const port = Number(m[1]);
      const conn = await until(
        () =>
          new Promise<{ closed: Promise<void> } | undefined>((resolve) => {
            const s = net.connect(port, "127.0.0.1");
            const closed = new Promise<void>((r) => s.once("close", () => r()));
            s.on("error", () => {});
            s.once("data", () => resolve({ closed }));
            s.once("close", () => resolve(undefined));
          }),
        30_000,
        "the server inside to greet",
      );
      child.kill(signal);
      const r = await done;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("sbx: stopped forwarding");
      await conn.closed;
      await expect(
        new Promise((resolve, reject) =>
          net.connect(port, "127.0.0.1", () => resolve("connected")).on("error", reject),
        ),
      ).rejects.toMatchObject({ code: "ECONNREFUSED" });
    });
  }
});
