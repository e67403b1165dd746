// Published ports from the command line, in-process against the embedded backend:
// `sandbox create -p 0:PORT --json` says the host port the system chose, `sbx port`
// prints the mappings as docker port does, `sandbox list` has a PORTS column, and a
// host port that is taken says who holds it (a sandbox of ours, or another program).

import net from "node:net";
import { afterEach, expect, it } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";
import { describeNeeding } from "../support/requirements.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function withBackend() {
  const home = makeHome("sbx-cli-ports-");
  const backend: BackendHandle = await startHomeBackend(home);
  cleanups.push(
    () => removeHome(home),
    () => backend.close(),
  );
  return async (argv: string[]) => {
    const io = createBufferIO();
    const code = await main(argv, io, { SBX_HOME: home });
    return { code, out: io.stdoutText(), err: io.stderrText() };
  };
}

/** Whether something accepts connections on 127.0.0.1:port now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

describeNeeding("bwrap", "published ports", () => {
  it("create --json gives the chosen host port; sbx port and the PORTS column show it", async () => {
    const sbx = await withBackend();
    const created = await sbx(["sandbox", "create", "api", "-p", "0:3000", "--json"]);
    expect(created.code, created.err).toBe(0);
    const doc = JSON.parse(created.out) as { published: Array<Record<string, unknown>> };
    expect(doc.published).toHaveLength(1);
    const hostPort = doc.published[0]!.host_port as number;
    expect(doc.published[0]).toMatchObject({ port: 3000, host_ip: "127.0.0.1", listening: true, reason: null });
    expect(hostPort).toBeGreaterThan(0);
    // The port said is the one bound: the backend listens there.
    expect(await accepts(hostPort)).toBe(true);

    const all = await sbx(["port", "api"]);
    expect(all.code, all.err).toBe(0);
    expect(all.out).toBe(`3000/tcp -> 127.0.0.1:${hostPort}\n`);
    const one = await sbx(["port", "api", "3000/tcp"]);
    expect(one.out).toBe(`127.0.0.1:${hostPort}\n`);
    const json = await sbx(["port", "api", "--json"]);
    expect(JSON.parse(json.out)).toMatchObject({
      name: "api",
      ports: [{ port: 3000, protocol: "tcp", host_ip: "127.0.0.1", host_port: hostPort, listening: true }],
    });
    const notPublished = await sbx(["port", "api", "4000"]);
    expect(notPublished.code).toBe(125);
    expect(notPublished.err).toContain("no port 4000/tcp is published for sandbox api");
    const unknown = await sbx(["port", "nosuch"]);
    const shownUnknown = await sbx(["sandbox", "show", "nosuch"]);
    expect(unknown.code).toBe(125);
    expect(unknown.code).toBe(shownUnknown.code);
    expect(unknown.err).toBe(shownUnknown.err);

    expect((await sbx(["sandbox", "create", "quiet"])).code).toBe(0);
    const list = await sbx(["sandbox", "list"]);
    // Not a terminal: tab-separated rows.
    const rows = list.out
      .trimEnd()
      .split("\n")
      .map((l) => l.split("\t"));
    const col = rows[0]!.indexOf("PORTS");
    expect(rows[0]!.slice(col - 1, col + 2)).toEqual(["NETWORK", "PORTS", "CREATED"]);
    expect(rows.find((r) => r[1] === "api")![col]).toBe(`127.0.0.1:${hostPort}->3000`);
    expect(rows.find((r) => r[1] === "quiet")![col]).toBe("-");
    const listed = JSON.parse((await sbx(["sandbox", "list", "--json"])).out) as {
      sandboxes: Array<{ name: string; published: Array<{ host_port: number }> }>;
    };
    expect(listed.sandboxes.find((s) => s.name === "api")!.published[0]!.host_port).toBe(hostPort);
  });

  it("a taken host port names the sandbox that publishes it, or says another program holds it", async () => {
    const sbx = await withBackend();
    const first = await sbx(["sandbox", "create", "api", "-p", "0:3000", "--json"]);
    expect(first.code, first.err).toBe(0);
    const taken = (JSON.parse(first.out) as { published: Array<{ host_port: number }> }).published[0]!.host_port;
    const clash = await sbx(["sandbox", "create", "web", "-p", `${taken}:8000`]);
    expect(clash.code).toBe(125);
    expect(clash.err).toContain(
      `cannot listen on 127.0.0.1:${taken}: EADDRINUSE: sandbox api publishes it (its port 3000)`,
    );
    expect((await sbx(["sandbox", "show", "web"])).code).toBe(125);

    // A real listener of another program.
    const other = net.createServer();
    await new Promise<void>((resolve) => other.listen({ host: "127.0.0.1", port: 0 }, resolve));
    cleanups.push(() => new Promise<void>((resolve) => other.close(() => resolve())));
    const busy = (other.address() as net.AddressInfo).port;
    const refused = await sbx(["sandbox", "create", "web", "-p", `${busy}:8000`]);
    expect(refused.code).toBe(125);
    expect(refused.err).toContain(
      `cannot listen on 127.0.0.1:${busy}: EADDRINUSE: another program on this host listens on it (not a sandbox)`,
    );
    expect(refused.err).not.toContain("sandbox api");
  });
});
