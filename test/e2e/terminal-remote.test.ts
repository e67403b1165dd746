// A terminal over a remote profile: https:// through TLS in front of a daemon's TCP
// listener (the setup `sbx daemon run --help` tells), so the terminal route is wss://.
// Spawned sbx on a real pseudo-terminal, since what is under test is read as a process
// starts: NODE_EXTRA_CA_CERTS, the way a user trusts their own CA (Node and Bun both
// read it). The TLS front is this test's: it also tells what the client sent, in clear.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import tls from "node:tls";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeHome, receiptsDbOf, removeHome, runSbx, sbxEnv } from "../support/cli.js";
import { startForegroundDaemon, stopForegroundDaemon } from "../support/daemon.js";
import { refusedPort } from "../support/misbehaving-server.js";
import { type OuterTerminal, sbxSession } from "../support/outer-terminal.js";
import { describeNeeding } from "../support/requirements.js";

describeNeeding(["pty", "openssl"], "a terminal over a remote https profile (wss://)", () => {
  let home: string;
  let daemon: ChildProcess;
  let front: tls.Server;
  let certFile: string;
  let token: string;
  /** Every TLS connection the front took: its handshake done or not, and what came through it in clear. */
  const connections: Array<{ secure: boolean; clear: Buffer[] }> = [];
  const terminals: OuterTerminal[] = [];
  let run = 0;

  beforeAll(async () => {
    home = makeHome("sbx-term-tls-");
    const port = await refusedPort();
    daemon = await startForegroundDaemon(home, ["--listen", `127.0.0.1:${port}`]);
    token = fs.readFileSync(path.join(home, "daemon", "token"), "utf8").trim();
    certFile = path.join(home, "front-cert.pem");
    const keyFile = path.join(home, "front-key.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        keyFile,
        "-out",
        certFile,
        "-days",
        "2",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stdio: "ignore" },
    );
    front = tls.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) });
    // Counted at the TCP connection, before any handshake: a refused certificate shows as a connection never secure.
    front.on("connection", () => connections.push({ secure: false, clear: [] }));
    front.on("secureConnection", (clientSide) => {
      const seen = connections[connections.length - 1]!;
      seen.secure = true;
      const daemonSide = net.connect(port, "127.0.0.1");
      clientSide.on("data", (d: Buffer) => seen.clear.push(d));
      clientSide.pipe(daemonSide).pipe(clientSide);
      clientSide.on("error", () => daemonSide.destroy());
      daemonSide.on("error", () => clientSide.destroy());
    });
    front.on("tlsClientError", () => {});
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
    const added = await runSbx(["profile", "add", "remote", "--api-url", url, "--api-key-stdin", "--use"], {
      home,
      input: token,
    });
    expect(added.code, added.stderr).toBe(0);
    const created = await runSbx(["sandbox", "create", "tt", "--isolation", "none"], {
      home,
      env: { NODE_EXTRA_CA_CERTS: certFile },
    });
    expect(created.code, created.stderr).toBe(0);
  });

  afterAll(async () => {
    for (const t of terminals) t.kill();
    await new Promise<void>((resolve) => front.close(() => resolve()));
    await stopForegroundDaemon(daemon);
    removeHome(home);
  });

  /** `sbx ARGS` on a new terminal, as a user's shell runs it (test/support/outer-terminal.ts). */
  function session(args: string, env: Record<string, string>) {
    const s = sbxSession(path.join(home, `session-${++run}`), args, {
      cwd: home,
      env: { ...sbxEnv(home), TERM: "xterm-256color", ...env },
    });
    terminals.push(s.t);
    return s;
  }

  it("exec -it: a shell on the sandbox's terminal through TLS, its exit status sbx's, the key never shown", async () => {
    const before = connections.length;
    const s = session("exec -it -s tt -- sh", { NODE_EXTRA_CA_CERTS: certFile });
    await s.t.waitFor(/[$#] $/m, "the shell's prompt");
    s.t.type("tty; echo answer-$((6*7))\r");
    await s.t.waitFor(/\/dev\/pts\/\d+\r\n/, "tty");
    await s.t.waitFor("answer-42", "the shell's answer");
    s.t.type("exit 4\r");
    const end = await s.over();
    expect(end.code).toBe(4);
    expect(end.sameMode).toBe(true);
    // The terminal went through the TLS front as a WebSocket upgrade of the terminal route.
    const clear = connections
      .slice(before)
      .map((c) => Buffer.concat(c.clear).toString("latin1"))
      .join("\n");
    expect(clear).toMatch(/^GET \/api\/v1\/sandbox\/[^ ]+\/terminal[^ ]* HTTP\/1\.1\r\n/m);
    expect(clear).toMatch(/\r\nupgrade: websocket\r\n/i);
    expect(s.t.text()).not.toContain(token);
    expect(fs.readFileSync(receiptsDbOf(home)).includes(token)).toBe(false);
  });

  it("a certificate this client does not trust: nothing ran (75), sbx says how to trust it, and not a byte went out", async () => {
    const before = connections.length;
    const s = session("exec -it -s tt -- sh", {});
    await s.t.waitFor("nothing ran", "sbx's answer");
    await s.t.waitFor("NODE_EXTRA_CA_CERTS", "the hint");
    const end = await s.over();
    expect(end.code).toBe(75);
    expect(end.sameMode).toBe(true);
    const tried = connections.slice(before);
    expect(tried.length).toBeGreaterThan(0);
    expect(tried.every((c) => !c.secure && c.clear.length === 0)).toBe(true);
  });
});
