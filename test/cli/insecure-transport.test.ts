// An API key never travels in clear over a network: over plain http:// to a host
// other than loopback, sbx refuses before connecting (125, saying why) unless the
// URL is a profile's that was added with --insecure. The "remote" host is a real
// server on this machine's non-loopback address, so a request that got through
// would be seen.

import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { makeHome, removeHome } from "../support/cli.js";
import { runMain } from "../support/in-process.js";
import { behaviours, type MisbehavingServer, startMisbehavingServer } from "../support/misbehaving-server.js";
import { ADDRESS, describeNeeding } from "../support/requirements.js";

const KEY = "sk-insecure-test-key-0123456789";
let server: MisbehavingServer;
let home: string;

describeNeeding("address", "an API key over plain http:// to this machine's non-loopback address", () => {
  beforeAll(async () => {
    server = await startMisbehavingServer(behaviours.succeeded(), ADDRESS!);
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach((t) => {
    home = makeHome("sbx-insecure-");
    server.requests.length = 0;
    t.onTestFinished(() => removeHome(home));
  });

  const sbx = (args: string[], env: Record<string, string> = {}, input?: string) =>
    runMain(args, { home, env, ...(input === undefined ? {} : { input }) });

  it("--api-url or SBX_API_URL with SBX_API_KEY: refused before connecting, nothing sent or stored", async () => {
    for (const [args, env] of [
      [["exec", "--api-url", server.url, "--", "echo", "hi"], { SBX_API_KEY: KEY }],
      [["exec", "--", "echo", "hi"], { SBX_API_KEY: KEY, SBX_API_URL: server.url }],
      [["sandbox", "list", "--api-url", server.url], { SBX_API_KEY: KEY }],
    ] as const) {
      const r = await sbx([...args], env);
      expect({ args, code: r.code }).toEqual({ args, code: 125 });
      expect(r.stderr).toContain(`refusing to send the API key in clear over http:// to ${new URL(server.url).host}`);
      expect(r.stderr).toContain("--insecure");
      expect(r.stderr).not.toContain(KEY);
    }
    expect(server.requests).toEqual([]);
    const receipts = await sbx(["receipts", "list", "--json"]);
    expect(JSON.parse(receipts.stdout)).toEqual([]);
  });

  it("a profile's key: refused when it is added without --insecure; sent once it was added with it", async () => {
    const refused = await sbx(["profile", "add", "lab", "--api-url", server.url, "--api-key-stdin"], {}, KEY);
    expect(refused.code).toBe(125);
    expect(refused.stderr).toContain("it would travel in clear over http:// to another machine");
    expect((await sbx(["profile", "list", "--json"])).stdout).not.toContain("lab");

    // Without a key nothing secret travels; SBX_API_KEY for it is refused all the same.
    expect((await sbx(["profile", "add", "plain", "--api-url", server.url])).code).toBe(0);
    expect((await sbx(["--profile", "plain", "exec", "--", "echo", "hi"])).code).toBe(0);
    expect(server.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
    const withKey = await sbx(["--profile", "plain", "exec", "--", "echo", "hi"], { SBX_API_KEY: KEY });
    expect(withKey.code).toBe(125);
    expect(withKey.stderr).toContain("add profile plain again with --insecure");

    const added = await sbx(
      ["profile", "add", "lab", "--api-url", server.url, "--api-key-stdin", "--insecure", "--json"],
      {},
      KEY,
    );
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ profile: "lab", insecure: true });
    const before = server.requests.length;
    const sent = await sbx(["--profile", "lab", "exec", "--", "echo", "hi"]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(server.requests.slice(before).map((r) => r.headers.authorization)).toContain(`ApiKey ${KEY}`);
    // --insecure belongs to the profile's URL: the same key sent elsewhere is refused.
    const elsewhere = await sbx(["--profile", "lab", "exec", "--api-url", `http://${ADDRESS}:1`, "--", "true"], {
      SBX_API_KEY: KEY,
    });
    expect(elsewhere.code).toBe(125);
  });

  it("init with a key for plain http:// needs --insecure too", async () => {
    const args = ["init", "--profile-name", "lab", "--api-url", server.url, "--api-key-stdin"];
    const refused = await sbx(args, {}, KEY);
    expect(refused.code).toBe(125);
    expect(server.requests).toEqual([]);
    const saved = await sbx([...args, "--insecure", "--json"], {}, KEY);
    expect(saved.code, saved.stderr).toBe(0);
    expect(JSON.parse(saved.stdout)).toMatchObject({ profile: "lab", insecure: true, health: "ok" });
  });

  it("loopback is this machine: a key goes to http://127.0.0.1 without --insecure", async () => {
    const local = await startMisbehavingServer(behaviours.succeeded());
    try {
      const r = await sbx(["exec", "--api-url", local.url, "--", "echo", "hi"], { SBX_API_KEY: KEY });
      expect(r.code, r.stderr).toBe(0);
      expect(local.requests[0]?.headers.authorization).toBe(`ApiKey ${KEY}`);
    } finally {
      await local.close();
    }
  });
});
