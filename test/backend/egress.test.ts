// Egress by policy (docs/network.md): a sandbox with network allow-list has no route
// out; its programs reach the destinations its policy allows through the backend's
// proxy (HTTP_PROXY and friends), and nothing else. The destinations are servers this
// test starts on the host's loopback (127.0.0.2, allowed by CIDR), named through the
// proxy's resolver (a map: the system's resolver is never asked).

import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { mapResolver } from "../../src/backend/egress/index.js";
import { type CountingListener, countingListener } from "../support/listeners.js";
import { REPO_ROOT } from "../support/cli.js";
import { describeNeeding } from "../support/requirements.js";
import { startTestBackend, type TestBackend, tempDir, until } from "./support.js";

const SERVER_IP = "127.0.0.2";

/** An HTTP server on SERVER_IP that answers `hello from NAME` to every request, counting them. */
function helloServer(): Promise<{ port: number; requests: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    count++;
    res.end(`hello from ${req.headers.host?.split(":")[0]}\n`);
  });
  return new Promise((resolve) => {
    server.listen(0, SERVER_IP, () => {
      const port = (server.address() as { port: number }).port;
      resolve({
        port,
        requests: () => count,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

describeNeeding(["bwrap", "tools"], "egress by policy (network allow-list)", () => {
  let b: TestBackend;
  let server: Awaited<ReturnType<typeof helloServer>>;
  let loopback: CountingListener;
  beforeAll(async () => {
    server = await helloServer();
    loopback = await countingListener("127.0.0.1");
    const hosts = new Map([
      ["allowed.test", [SERVER_IP]],
      ["api.wild.test", [SERVER_IP]],
      ["denied.test", [SERVER_IP]],
      ["rebind.test", ["127.0.0.1"]],
    ]);
    b = await startTestBackend({ drivers: { egress: { resolve: mapResolver(hosts), maxConnections: 16 } } });
    for (const name of ["shop", "other"]) {
      const res = await b.api("POST", "/api/v1/sandbox/create", {
        body: {
          name,
          isolation: "bwrap",
          egress: { allow_domains: ["allowed.test", "*.wild.test", "rebind.test"], allow_cidrs: [`${SERVER_IP}/32`] },
        },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.json).toMatchObject({ network: true, network_mode: "allow-list" });
    }
  });
  afterAll(async () => {
    await b.stop();
    await server.close();
    await loopback.close();
  });

  const exec = async (sandbox: string, command: string | string[]) => {
    const res = await b.api("POST", `/api/v1/sandbox/${sandbox}/execute`, { body: { command, timeout: 60_000 } });
    expect(res.status, res.text).toBe(200);
    return res.json as { stdout: string; stderr: string; exit_code: number };
  };

  it("reaches an allowed name with curl, python's urllib and node's fetch, through the proxy", async () => {
    const url = `http://allowed.test:${server.port}/`;
    const curl = await exec("shop", ["curl", "-sS", url]);
    expect(curl.stdout, curl.stderr).toBe("hello from allowed.test\n");
    const wild = await exec("shop", ["curl", "-sS", `http://api.wild.test:${server.port}/`]);
    expect(wild.stdout, wild.stderr).toBe("hello from api.wild.test\n");
    const py = await exec("shop", [
      "python3",
      "-c",
      `import urllib.request;print(urllib.request.urlopen("${url}").read().decode(),end="")`,
    ]);
    expect(py.stdout, py.stderr).toBe("hello from allowed.test\n");
    // Node 20's fetch reads no proxy variable: undici's EnvHttpProxyAgent (as a Node 20 program does), copied in.
    const undici = path.join(REPO_ROOT, "node_modules", "undici");
    const shown = (await b.api("GET", "/api/v1/sandbox/shop")).json;
    fs.cpSync(undici, path.join(shown.host_workspace, "node_modules", "undici"), { recursive: true });
    const node = await exec("shop", [
      "node",
      "-e",
      `const u=require("undici");u.setGlobalDispatcher(new u.EnvHttpProxyAgent());fetch("${url}").then(r=>r.text()).then(t=>process.stdout.write(t))`,
    ]);
    expect(node.stdout, node.stderr).toBe("hello from allowed.test\n");
    // Through SOCKS5 too (ALL_PROXY), the name resolved by the proxy.
    const socks = await exec("shop", ["sh", "-c", `curl -sS --proxy "$ALL_PROXY" ${url}`]);
    expect(socks.stdout, socks.stderr).toBe("hello from allowed.test\n");
  });

  it("refuses a name off the list with 403 saying so, and SOCKS with reply 2", async () => {
    const before = server.requests();
    const denied = await exec("shop", ["curl", "-sS", "-w", "%{http_code}", `http://denied.test:${server.port}/`]);
    expect(denied.stdout).toBe(
      "blocked by the sandbox's egress policy: denied.test not allowed\ndenied.test is not on the sandbox's allow-list\n403",
    );
    const tunnel = await exec("shop", ["curl", "-sS", `https://denied.test:${server.port}/`]);
    expect(tunnel.exit_code).not.toBe(0);
    expect(tunnel.stderr).toContain("403");
    const socks = await exec("shop", ["sh", "-c", `curl -sS --proxy "$ALL_PROXY" http://denied.test:${server.port}/`]);
    expect(socks.exit_code).not.toBe(0);
    expect(socks.stderr).toMatch(/SOCKS5.*\(2\)|not allowed/i);
    expect(server.requests()).toBe(before);
  });

  it("lists each connection, allowed and refused, with bytes and why, in GET …/egress", async () => {
    await exec("shop", ["curl", "-sS", `http://allowed.test:${server.port}/`]);
    await exec("shop", ["curl", "-sS", `http://denied.test:${server.port}/x`]);
    const report = await until(
      async () => {
        const got = (await b.api("GET", "/api/v1/sandbox/shop/egress")).json;
        const last = got.connections.at(-1);
        return last?.host === "denied.test" ? got : undefined;
      },
      30_000,
      "the refused connection in the report",
    );
    expect(report).toMatchObject({ name: "shop", network_mode: "allow-list" });
    expect(report.denied_total).toBeGreaterThan(0);
    expect(report.connections.at(-1)).toMatchObject({
      host: "denied.test",
      port: server.port,
      protocol: "http",
      allowed: false,
      reason: "denied.test is not on the sandbox's allow-list",
      address: null,
    });
    const reached = await until(
      async () => {
        const got = (await b.api("GET", "/api/v1/sandbox/shop/egress")).json;
        return got.connections.find(
          (c: { host: string; allowed: boolean; ended_at: string | null }) =>
            c.host === "allowed.test" && c.allowed && c.ended_at !== null,
        );
      },
      30_000,
      "an allowed connection that ended",
    );
    expect(reached).toMatchObject({ address: SERVER_IP, reason: null });
    expect(reached.bytes_in).toBeGreaterThan(0);
    expect(reached.bytes_out).toBeGreaterThan(0);
    // The other sandbox's connections are its own.
    const other = (await b.api("GET", "/api/v1/sandbox/other/egress")).json;
    expect(
      other.connections.some((c: { host: string }) => c.host === "denied.test" && other.connections.length > 0),
    ).toBe(false);
  });

  it("refuses IP literals outside the allowed CIDRs, the host's loopback, a private address and a name rebinding to loopback", async () => {
    const before = loopback.accepted();
    for (const [target, reason] of [
      [`127.0.0.1:${loopback.port}`, "127.0.0.1 is not in an allowed CIDR"],
      ["10.1.2.3:80", "10.1.2.3 is not in an allowed CIDR"],
      ["198.51.100.7:80", "198.51.100.7 is not in an allowed CIDR"],
      [`rebind.test:${loopback.port}`, "rebind.test resolves to 127.0.0.1, a loopback address"],
    ]) {
      // --noproxy '': through the proxy even for 127.0.0.1 (NO_PROXY keeps the sandbox's own loopback direct).
      const res = await exec("shop", [
        "curl",
        "-sS",
        "--noproxy",
        "",
        "-x",
        "http://127.0.0.1:3128",
        `http://${target}/`,
      ]);
      expect(res.stdout, target).toContain("blocked by the sandbox's egress policy");
      expect(res.stdout, target).toContain(reason);
    }
    expect(loopback.accepted()).toBe(before);
  });

  it("gives a program that ignores the proxy no route: a raw connect fails", async () => {
    const raw = await exec("shop", [
      "python3",
      "-c",
      `import socket\ntry:\n socket.create_connection(("${SERVER_IP}", ${server.port}), timeout=5); print("connected")\nexcept OSError as e: print(type(e).__name__, e.errno)`,
    ]);
    expect(raw.stdout).toMatch(/^OSError 101\n$|^ConnectionRefusedError/);
    const routes = await exec("shop", ["cat", "/proc/net/route"]);
    expect(routes.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("refuses a CONNECT whose TLS names another host (SNI) before a byte reaches the destination", async () => {
    // A destination that counts the bytes it is sent and answers none (it speaks no TLS).
    let received = 0;
    const sink = net.createServer((socket) => {
      socket.on("data", (chunk: Buffer) => {
        received += chunk.length;
        socket.destroy();
      });
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => sink.listen(0, SERVER_IP, () => resolve()));
    const port = (sink.address() as net.AddressInfo).port;
    try {
      // The same name in CONNECT and TLS: the ClientHello goes through.
      await exec("shop", ["curl", "-sSk", `https://allowed.test:${port}/`]);
      expect(received).toBeGreaterThan(0);
      received = 0;
      // CONNECT allowed.test, TLS naming denied.test: cut before a byte of it is sent on.
      const tls = await exec("shop", [
        "curl",
        "-sSk",
        "--connect-to",
        `denied.test:443:allowed.test:${port}`,
        "https://denied.test/",
      ]);
      expect(tls.exit_code).not.toBe(0);
      expect(received).toBe(0);
    } finally {
      sink.close();
    }
  });

  it("applies a changed policy to the next connection of a process that runs on", async () => {
    const script = [
      "import urllib.request, time, sys",
      "def get():",
      "  try: return urllib.request.urlopen(sys.argv[1]).read().decode().strip()",
      "  except Exception as e: return 'refused ' + str(getattr(e, 'code', e))",
      "print(get(), flush=True)",
      "while not __import__('os').path.exists('/workspace/go'): time.sleep(0.05)",
      "print(get(), flush=True)",
    ].join("\n");
    fs.writeFileSync(path.join((await b.api("GET", "/api/v1/sandbox/other")).json.host_workspace, "probe.py"), script);
    const started = await b.api("POST", "/api/v1/sandbox/other/processes", {
      body: { command: ["python3", "/workspace/probe.py", `http://allowed.test:${server.port}/`], name: "probe" },
    });
    expect(started.status, started.text).toBe(201);
    const logs = async () => {
      const got = await b.api("GET", `/api/v1/sandbox/other/processes/${started.json.process_id}/logs?stream=stdout`);
      return Buffer.from(got.json.data ?? "", "base64").toString();
    };
    await until(async () => (await logs()).includes("hello from allowed.test"), 30_000, "the first answer");
    const updated = await b.api("PATCH", "/api/v1/sandbox/other", {
      body: { egress: { allow_domains: [], deny_domains: ["allowed.test"] } },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json.egress).toEqual({
      allow_domains: [],
      deny_domains: ["allowed.test"],
      allow_cidrs: [`${SERVER_IP}/32`],
    });
    await exec("other", ["touch", "/workspace/go"]);
    await until(async () => (await logs()).includes("refused 403"), 30_000, "the second answer");
    // The other sandbox's policy is its own.
    expect((await exec("shop", ["curl", "-sS", `http://allowed.test:${server.port}/`])).stdout).toBe(
      "hello from allowed.test\n",
    );
  });

  it("bounds one sandbox's connections at once; another sandbox is not hurt", async () => {
    // 40 connections held open from `shop` (the bound is 16 in this test): the rest are refused with 503.
    const flood = await exec("shop", [
      "python3",
      "-c",
      [
        "import socket",
        "held, answers = [], []",
        "for i in range(40):",
        "  s = socket.create_connection(('127.0.0.1', 3128)); s.sendall(b'CONNECT allowed.test:" +
          server.port +
          " HTTP/1.1\\r\\n\\r\\n'); held.append(s)",
        "for s in held: answers.append(s.recv(100).split(b' ')[1].decode())",
        "print(answers.count('200'), answers.count('503'))",
      ].join("\n"),
    ]);
    expect(flood.stdout, flood.stderr).toBe("16 24\n");
    expect(
      (
        await exec("other", [
          "curl",
          "-sS",
          "-o",
          "/dev/null",
          "-w",
          "%{http_code}",
          `http://denied.test:${server.port}/`,
        ])
      ).stdout,
    ).toBe("403");
  });
});

describeNeeding(["bwrap"], "an egress policy across a daemon restart", () => {
  it("keeps a sandbox's policy when the daemon starts again", async () => {
    const dir = tempDir();
    const first = await startTestBackend({}, dir);
    const made = await first.api("POST", "/api/v1/sandbox/create", {
      body: {
        name: "kept",
        isolation: "bwrap",
        egress: { allow_domains: ["pypi.org"], allow_cidrs: ["203.0.113.0/24"] },
      },
    });
    expect(made.status, made.text).toBe(201);
    await first.api("PATCH", "/api/v1/sandbox/kept", { body: { egress: { deny_domains: ["evil.pypi.org"] } } });
    await first.stop();
    const second = await startTestBackend({}, dir);
    const shown = await second.api("GET", "/api/v1/sandbox/kept");
    expect(shown.json).toMatchObject({
      network_mode: "allow-list",
      egress: { allow_domains: ["pypi.org"], deny_domains: ["evil.pypi.org"], allow_cidrs: ["203.0.113.0/24"] },
    });
    await second.stop();
  });
});

it("refuses an egress policy that is not one, and a policy for a sandbox without network allow-list", async () => {
  const b = await startTestBackend();
  try {
    const bad = await b.api("POST", "/api/v1/sandbox/create", {
      body: { name: "bad", egress: { allow_domains: ["https://pypi.org"] } },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.field).toBe("egress.allow_domains");
    const cidr = await b.api("POST", "/api/v1/sandbox/create", {
      body: { name: "bad", egress: { allow_cidrs: ["10.0.0.0/33"] } },
    });
    expect(cidr.status).toBe(400);
    const clash = await b.api("POST", "/api/v1/sandbox/create", {
      body: { name: "bad", network_mode: "user", egress: { allow_domains: ["pypi.org"] } },
    });
    expect(clash.status).toBe(400);
    expect(clash.json.error.details.field).toBe("egress");
    await b.api("POST", "/api/v1/sandbox/create", { body: { name: "plain", network_mode: "none" } });
    const patch = await b.api("PATCH", "/api/v1/sandbox/plain", { body: { egress: { allow_domains: ["pypi.org"] } } });
    expect(patch.status).toBe(400);
    expect(patch.json.error.message).toContain("network none");
  } finally {
    await b.stop();
  }
});
