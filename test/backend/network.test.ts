// Network modes (docs/drivers.md, "Network modes"): without a network a sandbox has
// only its own loopback; --network (user) reaches out through slirp4netns but never
// the host's loopback services, which --network host does reach; a published port
// reaches a server inside from the host's loopback, also without any network.

import fs from "node:fs";
import http from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectFrom, type CountingListener, countingListener } from "../support/listeners.js";
import { describeNeeding } from "../support/requirements.js";
import { startTestBackend, type TestBackend, until } from "./support.js";

function get(port: number): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/", timeout: 5000 }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", () => resolve(null));
    });
    req.on("error", () => resolve(null));
    req.on("timeout", () => req.destroy());
  });
}

describeNeeding(["bwrap", "tools"], "published ports", () => {
  let b: TestBackend;
  beforeAll(async () => {
    b = await startTestBackend();
  });
  afterAll(async () => {
    await b.stop();
  });

  it("reaches a server inside a sandbox without network from the host's loopback, and says so in show", async () => {
    const created = await b.api("POST", "/api/v1/sandbox/create", {
      body: { name: "web", isolation: "bwrap", publish: [{ port: 8000 }] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ network: false, network_mode: "none" });
    const shown = (await b.api("GET", "/api/v1/sandbox/web")).json;
    expect(shown.published).toEqual([
      { port: 8000, host_ip: "127.0.0.1", host_port: expect.any(Number), listening: true, reason: null },
    ]);
    const hostPort: number = shown.published[0].host_port;
    expect(hostPort).toBeGreaterThan(0);
    // Nothing runs in it yet: a connection is closed, nothing started.
    expect(await get(hostPort)).toBeNull();
    expect((await b.api("GET", "/api/v1/sandbox/web")).json.environment.state).toBe("stopped");

    const srv = await b.api("POST", "/api/v1/sandbox/web/processes", {
      body: { command: "echo inside > index.html; exec python3 -m http.server 8000 --bind 127.0.0.1" },
    });
    expect(srv.status, srv.text).toBe(201);
    const answer = await until(async () => {
      const res = await get(hostPort);
      return res?.status === 200 ? res : undefined;
    }, 20_000);
    expect(answer.body).toBe("inside\n");
    // Many at once: each its own connection inside.
    const many = await Promise.all(Array.from({ length: 8 }, () => get(hostPort)));
    expect(many.map((r) => r?.body)).toEqual(Array(8).fill("inside\n"));

    // A host port that is taken: nothing is created, and the answer says which.
    const taken = await b.api("POST", "/api/v1/sandbox/create", {
      body: { name: "clash", isolation: "bwrap", publish: [{ port: 80, host_port: hostPort }] },
    });
    expect(taken.status).toBe(400);
    expect(taken.json.error).toMatchObject({ code: "invalid_request", details: { field: "publish" } });
    expect(taken.json.error.message).toContain(`127.0.0.1:${hostPort}`);
    expect((await b.api("GET", "/api/v1/sandbox/clash")).status).toBe(404);

    await b.api("DELETE", "/api/v1/sandbox/web?force=true");
    expect(await get(hostPort)).toBeNull();
  });
});

describeNeeding(["bwrap", "tools", "usernet"], "network modes", () => {
  let b: TestBackend;
  let listener: CountingListener;
  beforeAll(async () => {
    b = await startTestBackend();
    listener = await countingListener("127.0.0.1");
    for (const [name, network_mode] of [
      ["offline", "none"],
      ["outbound", "user"],
      ["hostnet", "host"],
    ]) {
      const res = await b.api("POST", "/api/v1/sandbox/create", { body: { name, isolation: "bwrap", network_mode } });
      expect(res.status, res.text).toBe(201);
      expect(res.json.network_mode).toBe(network_mode);
    }
  });
  afterAll(async () => {
    await listener.close();
    await b.stop();
  });

  const exec = async (sandbox: string, command: string | string[]) => {
    const res = await b.api("POST", `/api/v1/sandbox/${sandbox}/execute`, { body: { command, timeout: 30_000 } });
    expect(res.status, res.text).toBe(200);
    return res.json;
  };

  it("--network (user) has an interface with a default route; without a network only lo", async () => {
    const routes = (await exec("outbound", ["cat", "/proc/net/route"])).stdout as string;
    expect(routes).toMatch(/^tap0\s+00000000\s+0202000A/m);
    expect((await exec("offline", ["cat", "/proc/net/route"])).stdout.trim().split("\n")).toHaveLength(1);
    expect((await exec("offline", ["ls", "/sys/class/net"])).exit_code).not.toBe(0);
  });

  it("--network (user) cannot reach a listener on the host's loopback; --network host can", async () => {
    const before = listener.accepted();
    // Through the gateway (where slirp would otherwise map the host's loopback), and its own loopback.
    for (const [sandbox, host] of [
      ["outbound", "10.0.2.2"],
      ["outbound", "127.0.0.1"],
      ["offline", "127.0.0.1"],
    ] as const) {
      const tried = await exec(sandbox, connectFrom(host, listener.port));
      expect(tried.stdout, `${sandbox} to ${host}`).toMatch(/^(ConnectionRefusedError|OSError|TimeoutError)\n$/);
    }
    expect(listener.accepted()).toBe(before);
    expect((await exec("hostnet", connectFrom("127.0.0.1", listener.port))).stdout).toBe("connected\n");
    await until(() => listener.accepted() === before + 1, 5000, "the host's listener to see the connection");
  });

  it("runs slirp4netns as the uid the sandbox runs as, never as root; its commands are as in any sandbox", async () => {
    await exec("outbound", "true");
    const hostUid: number = (await b.api("GET", "/api/v1/sandbox/outbound")).json.driver.host_uid;
    // This backend's own children (it runs in this process): no other suite's.
    const slirps = fs
      .readdirSync("/proc")
      .filter((e) => /^\d+$/.test(e))
      .flatMap((pid) => {
        try {
          const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
          const field = (name: string) => new RegExp(`^${name}:\\s+(\\S+)`, "m").exec(status)?.[1];
          return field("Name") === "slirp4netns" && Number(field("PPid")) === process.pid ? [status] : [];
        } catch {
          return [];
        }
      });
    expect(slirps).toHaveLength(1);
    const [real, effective, saved] = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(slirps[0]!)!.slice(1).map(Number);
    expect([real, effective, saved]).toEqual([hostUid, hostUid, hostUid]);
    if (process.getuid?.() === 0) expect(hostUid).not.toBe(0);
    const inside = await exec(
      "outbound",
      "cat /proc/self/uid_map; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; unshare -U true && echo made-one",
    );
    const [map, ...rest] = (inside.stdout as string).trim().split("\n");
    // Nested below the namespace made for bwrap, whose 0 is the sandbox's host uid.
    expect(map!.trim().split(/\s+/).slice(1)).toEqual(["0", "1"]);
    expect(rest).toEqual(["CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1"]);
  });

  it("says each mode in show, and refuses a mode that contradicts network", async () => {
    expect((await b.api("GET", "/api/v1/sandbox/outbound")).json).toMatchObject({
      network: true,
      network_mode: "user",
      driver: { namespaces: expect.arrayContaining(["net"]) },
    });
    expect((await b.api("GET", "/api/v1/sandbox/hostnet")).json.driver.namespaces).not.toContain("net");
    const bad = await b.api("POST", "/api/v1/sandbox/create", { body: { network: false, network_mode: "host" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.field).toBe("network");
  });
});
