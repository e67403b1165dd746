// Egress evidence on the execution (docs/network.md, "Evidence"): a connection the
// sandbox's egress proxy refused while an execution ran is charged to it — on its
// record (while it runs and once it ended) and on its `exit` event — and to no
// execution of another sandbox. Destinations are a server on the host's loopback
// (127.0.0.2, allowed by CIDR), named through the proxy's resolver (a map). And the
// proxy's bound at its default (128 a sandbox): 500 held at once from one sandbox, the
// rest refused and charged to it, while another sandbox is served.

import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { mapResolver } from "../../src/backend/egress/index.js";
import { describeNeeding } from "../support/requirements.js";
import { startTestBackend, type TestBackend, until } from "./support.js";

const SERVER_IP = "127.0.0.2";
const REFUSED = "denied.test is not on the sandbox's allow-list";

interface Frame {
  type: string;
  data: Record<string, unknown>;
}

/** The events of an SSE answer, in order. */
function framesOf(text: string): Frame[] {
  return text
    .split("\n\n")
    .filter((f) => f.includes("event: "))
    .map((f) => ({ type: /event: (\w+)/.exec(f)![1]!, data: JSON.parse(/data: (.*)/.exec(f)![1]!) }));
}

describeNeeding(["bwrap", "tools"], "egress denials on the execution", () => {
  let b: TestBackend;
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end("hello\n"));
    await new Promise<void>((resolve) => server.listen(0, SERVER_IP, () => resolve()));
    port = (server.address() as { port: number }).port;
    const hosts = new Map([
      ["allowed.test", [SERVER_IP]],
      ["denied.test", [SERVER_IP]],
    ]);
    b = await startTestBackend({ drivers: { egress: { resolve: mapResolver(hosts) } } });
    for (const name of ["shop", "quiet"]) {
      const res = await b.api("POST", "/api/v1/sandbox/create", {
        body: {
          name,
          isolation: "bwrap",
          egress: { allow_domains: ["allowed.test"], allow_cidrs: [`${SERVER_IP}/32`] },
        },
      });
      expect(res.status, res.text).toBe(201);
    }
  });
  afterAll(async () => {
    await b.stop();
    await new Promise((done) => server.close(done));
  });

  const exec = async (sandbox: string, command: string[]) => {
    const res = await b.api("POST", `/api/v1/sandbox/${sandbox}/execute`, { body: { command, timeout: 60_000 } });
    expect(res.status, res.text).toBe(200);
    return res.json as Record<string, unknown> & { execution_id: string };
  };

  it("puts every refusal on the record of the execution that ran, with a total and the first ones", async () => {
    const script = `for i in 1 2 3; do curl -s -o /dev/null http://denied.test:${port}/$i; done; curl -s http://allowed.test:${port}/`;
    const rec = await exec("shop", ["sh", "-c", script]);
    expect(rec.stdout).toBe("hello\n");
    expect(rec.egress_denied).toEqual({
      total: 3,
      first: [1, 2, 3].map(() => ({
        at: expect.any(String),
        host: "denied.test",
        port,
        protocol: "http",
        reason: REFUSED,
      })),
    });
    // Kept: read back, it says the same.
    const again = await b.api("GET", `/api/v1/sandbox/shop/executions/${rec.execution_id}`);
    expect(again.json.egress_denied).toEqual(rec.egress_denied);
    // An execution that was refused nothing carries no egress_denied.
    const clean = await exec("shop", ["curl", "-s", `http://allowed.test:${port}/`]);
    expect(clean.stdout).toBe("hello\n");
    expect(clean).not.toHaveProperty("egress_denied");
  });

  it("keeps the first 10 and counts the rest; a tunnel and SOCKS refusal count as any", async () => {
    const script = [
      `for i in $(seq 1 12); do curl -s -o /dev/null http://denied.test:${port}/; done`,
      `curl -s -o /dev/null https://denied.test:${port}/`,
      `curl -s -o /dev/null --proxy "$ALL_PROXY" http://denied.test:${port}/`,
    ].join("; ");
    const rec = await exec("shop", ["sh", "-c", script]);
    const denied = rec.egress_denied as { total: number; first: Array<{ protocol: string }> };
    expect(denied.total).toBe(14);
    expect(denied.first).toHaveLength(10);
    expect(denied.first.every((d) => d.protocol === "http")).toBe(true);
  });

  it("says the refusals so far on a running execution, and the final ones on its exit event", async () => {
    const workspace = (await b.api("GET", "/api/v1/sandbox/shop")).json.host_workspace as string;
    fs.rmSync(path.join(workspace, "go"), { force: true });
    const script = `curl -s -o /dev/null http://denied.test:${port}/a; while [ ! -f /workspace/go ]; do sleep 0.05; done; curl -s -o /dev/null http://denied.test:${port}/b`;
    const streamed = b.api("POST", "/api/v1/sandbox/shop/execute", {
      body: { command: ["sh", "-c", script], stream: true, timeout: 60_000 },
    });
    const running = await until(
      async () => {
        const list = await b.api("GET", "/api/v1/sandbox/shop/executions?outcome=pending");
        const first = list.json.executions[0];
        return first?.egress_denied?.total === 1 ? first : undefined;
      },
      30_000,
      "the running execution's first refusal",
    );
    expect(running.outcome).toBe("pending");
    fs.writeFileSync(path.join(workspace, "go"), "");
    const frames = framesOf((await streamed).text);
    // Each refusal is an event of the stream, in order, before its exit.
    const denials = frames.filter((f) => f.type === "egress_denied");
    expect(denials.map((f) => [f.data.host, f.data.port, f.data.protocol, f.data.reason, f.data.total])).toEqual([
      ["denied.test", port, "http", REFUSED, 1],
      ["denied.test", port, "http", REFUSED, 2],
    ]);
    expect(frames.findIndex((f) => f.type === "egress_denied")).toBeLessThan(
      frames.findIndex((f) => f.type === "exit"),
    );
    const exit = frames.find((f) => f.type === "exit")!;
    expect(exit.data.egress_denied).toMatchObject({
      total: 2,
      first: [{ host: "denied.test" }, { host: "denied.test" }],
    });
    const rec = await b.api("GET", `/api/v1/sandbox/shop/executions/${running.execution_id}`);
    expect(rec.json.egress_denied).toEqual(exit.data.egress_denied);
    // Kept in the event log: a page has them, and resuming after the first gets the second.
    const page = await b.api("GET", `/api/v1/sandbox/shop/executions/${running.execution_id}/events`);
    const kept = page.json.events.filter((e: { type: string }) => e.type === "egress_denied");
    expect(kept.map((e: { data: { total: number } }) => e.data.total)).toEqual([1, 2]);
    const resumed = await b.api(
      "GET",
      `/api/v1/sandbox/shop/executions/${running.execution_id}/stream?after=${kept[0].sequence}`,
    );
    const after = framesOf(resumed.text).filter((f) => f.type === "egress_denied");
    expect(after.map((f) => f.data.total)).toEqual([2]);
  });

  it("charges a refusal to what runs in its sandbox only: another sandbox's execution at that moment carries none", async () => {
    const workspace = (await b.api("GET", "/api/v1/sandbox/quiet")).json.host_workspace as string;
    fs.rmSync(path.join(workspace, "go"), { force: true });
    const waiting = b.api("POST", "/api/v1/sandbox/quiet/execute", {
      body: { command: ["sh", "-c", "while [ ! -f /workspace/go ]; do sleep 0.05; done"], timeout: 60_000 },
    });
    await until(
      async () => (await b.api("GET", "/api/v1/sandbox/quiet/executions?outcome=pending")).json.executions.length > 0,
      30_000,
      "quiet's execution running",
    );
    const loud = await exec("shop", ["curl", "-s", "-o", "/dev/null", `http://denied.test:${port}/`]);
    expect((loud.egress_denied as { total: number }).total).toBe(1);
    fs.writeFileSync(path.join(workspace, "go"), "");
    const quiet = (await waiting).json;
    expect(quiet.outcome).toBe("succeeded");
    expect(quiet).not.toHaveProperty("egress_denied");
  });
});

describeNeeding(["bwrap", "tools"], "egress proxy bound at its default", () => {
  it("500 connections at once from one sandbox: 128 served, the rest refused with 503; another sandbox served meanwhile", async () => {
    const server = http.createServer((_req, res) => res.end("hello\n"));
    await new Promise<void>((resolve) => server.listen(0, SERVER_IP, () => resolve()));
    const port = (server.address() as { port: number }).port;
    const b = await startTestBackend({
      drivers: { egress: { resolve: mapResolver(new Map([["allowed.test", [SERVER_IP]]])) } },
    });
    try {
      for (const name of ["flood", "calm"]) {
        const res = await b.api("POST", "/api/v1/sandbox/create", {
          body: {
            name,
            isolation: "bwrap",
            egress: { allow_domains: ["allowed.test"], allow_cidrs: [`${SERVER_IP}/32`] },
          },
        });
        expect(res.status, res.text).toBe(201);
      }
      const workspace = (await b.api("GET", "/api/v1/sandbox/flood")).json.host_workspace as string;
      // 500 tunnels opened at once and held until /workspace/go appears; the answers' codes counted.
      const script = [
        "import socket, os, time, collections",
        "held, answers = [], collections.Counter()",
        "for i in range(500):",
        "  s = socket.create_connection(('127.0.0.1', 3128)); held.append(s)",
        `  s.sendall(b'CONNECT allowed.test:${port} HTTP/1.1\\r\\n\\r\\n')`,
        "for s in held:",
        "  head = s.recv(100)",
        "  answers[head.split(b' ')[1].decode() if head else 'closed'] += 1",
        "print(dict(sorted(answers.items())), flush=True)",
        "open('/workspace/counted', 'w').close()",
        "while not os.path.exists('/workspace/go'): time.sleep(0.05)",
      ].join("\n");
      const flood = b.api("POST", "/api/v1/sandbox/flood/execute", {
        body: { command: ["python3", "-c", script], timeout: 120_000 },
      });
      await until(() => fs.existsSync(path.join(workspace, "counted")), 120_000, "the flood's answers counted");
      // While flood holds its 128: calm's connection is its own, and served.
      const calm = await b.api("POST", "/api/v1/sandbox/calm/execute", {
        body: { command: ["curl", "-sS", `http://allowed.test:${port}/`], timeout: 60_000 },
      });
      expect(calm.json.stdout, calm.json.stderr).toBe("hello\n");
      fs.writeFileSync(path.join(workspace, "go"), "");
      const done = (await flood).json;
      expect(done.stdout, done.stderr).toBe("{'200': 128, '503': 372}\n");
      // Each refusal past the bound is evidence too: on the flood's record, none on calm's.
      expect(done.egress_denied.total).toBe(372);
      expect(done.egress_denied.first[0].reason).toContain(
        "too many connections from this sandbox at once (at most 128)",
      );
      expect(calm.json).not.toHaveProperty("egress_denied");
    } finally {
      await b.stop();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
