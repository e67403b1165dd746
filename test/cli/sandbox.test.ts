// Sandboxes from the command line, in-process against the embedded backend: a
// sandbox without isolation is said once, bwrap where it cannot run is refused with
// the reason, and `sandbox show` says what its commands can see.

import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";
import { describeNeeding } from "../support/requirements.js";
import { tunDevices } from "../support/tun-devices.js";
import { until } from "../support/wait.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function withBackend(opts: Parameters<typeof startHomeBackend>[1] = {}) {
  const home = makeHome("sbx-cli-sandbox-");
  const backend: BackendHandle = await startHomeBackend(home, opts);
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

const NO_BWRAP = { drivers: { bwrap: { program: "/nonexistent/bwrap" } } };

describe("where bwrap cannot run", () => {
  it("says once, on the first use, that default runs without isolation and what to install", async () => {
    const sbx = await withBackend(NO_BWRAP);
    const first = await sbx(["exec", "--", "echo", "hi"]);
    expect(first.code).toBe(0);
    expect(first.out).toBe("hi\n");
    expect(first.err).toMatch(
      /^sbx: warning: sandbox default runs commands without isolation \(none\): they see and can change what you can\. .*install bubblewrap/m,
    );
    expect(first.err.match(/warning/g)).toHaveLength(1);
    const second = await sbx(["exec", "--", "true"]);
    expect(second.err).toBe("");
    const status = await sbx(["daemon", "status"]);
    expect(status.out).toContain("isolation\tnone for new sandboxes (NOT ISOLATED): /nonexistent/bwrap cannot run");
  });

  it("refuses --isolation bwrap with the reason, exit 125, and shows a none sandbox for what it is", async () => {
    const sbx = await withBackend(NO_BWRAP);
    const refused = await sbx(["sandbox", "create", "iso", "--isolation", "bwrap"]);
    expect(refused.code).toBe(125);
    expect(refused.err).toContain("isolation bwrap is not available: /nonexistent/bwrap cannot run");
    const created = await sbx(["sandbox", "create", "plain"]);
    expect(created.code).toBe(0);
    expect(created.err).toContain("sbx: warning: sandbox plain runs commands without isolation (none)");
    const shown = await sbx(["sandbox", "show", "plain"]);
    expect(shown.out).toContain(
      "isolation\tnone: NOT ISOLATED, commands run on the host as you and see what you see\n",
    );
    expect(shown.out).toContain("network\thost (the host's network itself: its loopback services too)\n");
    // --network without isolation is the host's (all there is); a mode that is not is refused.
    const online = await sbx(["sandbox", "create", "plain2", "--network", "--json"]);
    expect(JSON.parse(online.out)).toMatchObject({ isolation: "none", network_mode: "host" });
    const user = await sbx(["sandbox", "create", "plain3", "--network", "user"]);
    expect(user.code).toBe(125);
    expect(user.err).toContain(
      "network user is not available: a sandbox without isolation (none) has the host's network",
    );
  });
});

describeNeeding("bwrap", "where bwrap runs", () => {
  it("creates isolated sandboxes without a warning, network off unless asked", async () => {
    const sbx = await withBackend();
    const created = await sbx(["sandbox", "create", "iso", "--json"]);
    expect(created.code).toBe(0);
    expect(created.err).toBe("");
    expect(JSON.parse(created.out)).toMatchObject({ name: "iso", isolation: "bwrap", network: false });
    const online = await sbx(["sandbox", "create", "online", "--network", "host", "--json"]);
    expect(JSON.parse(online.out)).toMatchObject({ isolation: "bwrap", network: true, network_mode: "host" });
    const published = await sbx(["sandbox", "create", "web", "-p", "127.0.0.1:0:8000", "-p", "9000"]);
    expect(published.code, published.err).toBe(0);
    expect((await sbx(["sandbox", "show", "web"])).out).toMatch(
      /^published\t127\.0\.0\.1:\d+ -> 8000, 127\.0\.0\.1:\d+ -> 9000$/m,
    );
    const bad = await sbx(["sandbox", "create", "--network", "web2"]);
    expect(bad.code).toBe(125);
    expect(bad.err).toContain("a name goes first: sbx sandbox create NAME --network");
    expect((await sbx(["sandbox", "create", "x", "-p", "80:"])).err).toContain("--publish takes PORT");
    const shown = await sbx(["sandbox", "show", "iso"]);
    expect(shown.out).toContain("network\tnone (only its own loopback, shared by its commands)\n");
    expect(shown.out).toMatch(/^namespaces\tuser mount pid ipc uts net$/m);
    expect(shown.out).toMatch(/^workspace\t\/workspace$/m);
  });
});

describeNeeding("bwrap", "a sandbox's environment from the command line", () => {
  it("sandbox show says whether it runs; stop says what it ended; start and the next exec start it again", async () => {
    const sbx = await withBackend();
    expect((await sbx(["sandbox", "create", "web"])).code).toBe(0);
    expect((await sbx(["sandbox", "show", "web"])).out).toMatch(
      /^environment\tstopped \(the next command starts it\)$/m,
    );
    expect((await sbx(["process", "start", "-s", "web", "--name", "srv", "--", "sleep", "600"])).code).toBe(0);
    const running = await sbx(["sandbox", "show", "web"]);
    expect(running.out).toMatch(/^environment\trunning since \S+, \d+ processes \(init pid \d+\)$/m);

    const stopped = await sbx(["sandbox", "stop", "web"]);
    expect(stopped.code).toBe(0);
    expect(stopped.err).toBe(
      "sbx: stopped sandbox web: 1 process stopped; its workspace is kept, the next command starts it again\n",
    );
    expect((await sbx(["sandbox", "stop", "web"])).err).toBe("sbx: sandbox web was not running; nothing to stop\n");
    const json = JSON.parse((await sbx(["sandbox", "stop", "web", "--json"])).out);
    expect(json).toMatchObject({ name: "web", was_running: false, environment: { state: "stopped" } });

    const started = await sbx(["sandbox", "start", "web"]);
    expect(started.code).toBe(0);
    expect(started.err).toMatch(/^sbx: sandbox web is running \(init pid \d+\)\n$/);
    expect((await sbx(["sandbox", "stop", "web"])).err).toContain("stopped sandbox web: nothing was running in it");
    const exec = await sbx(["exec", "-s", "web", "--", "sh", "-c", "echo hi > /tmp/x; cat /tmp/x"]);
    expect(exec).toMatchObject({ code: 0, out: "hi\n" });
    expect((await sbx(["sandbox", "start", "nosuch"])).code).toBe(125);
  });
});

describeNeeding(["bwrap", "usernet"], "--network from the command line", () => {
  it("gives user-mode networking, and says so in show and daemon status", async () => {
    const sbx = await withBackend();
    const created = await sbx(["sandbox", "create", "out", "--network", "--json"]);
    expect(JSON.parse(created.out)).toMatchObject({ network: true, network_mode: "user" });
    expect((await sbx(["sandbox", "show", "out"])).out).toMatch(/^network\tuser \(outbound through slirp4netns/m);
    expect((await sbx(["daemon", "status"])).out).toMatch(/^network\t--network \(user\) through slirp4netns$/m);
  });
});

describeNeeding(["root", "bwrap", "slirp4netns"], "--network where a sandbox's uid cannot open the tun device", () => {
  it("is refused at create with the reason and the fix, exit 125; daemon status says it is not available", async () => {
    const tun = tunDevices();
    const sbx = await withBackend({ drivers: { tunDevice: tun.rootOnly } });
    const refused = await sbx(["sandbox", "create", "out", "--network"]);
    expect(refused.code).toBe(125);
    expect(refused.err).toContain(
      `network user is not available: ${tun.rootOnly} is mode 0600, owned by root: a sandbox's uid cannot open it`,
    );
    expect(refused.err).toContain(`fix: chmod 0666 ${tun.rootOnly}`);
    expect((await sbx(["sandbox", "show", "out"])).code).not.toBe(0);
    expect((await sbx(["daemon", "status"])).out).toMatch(
      new RegExp(
        `^network\t--network \\(user\\) not available: ${tun.rootOnly} is mode 0600, owned by root: .*; --network host works$`,
        "m",
      ),
    );
  });

  it("shows one made where it worked as not available, with the reason", async () => {
    const tun = tunDevices();
    const home = makeHome("sbx-cli-sandbox-");
    cleanups.push(() => removeHome(home));
    const sbx = async (argv: string[]) => {
      const io = createBufferIO();
      const code = await main(argv, io, { SBX_HOME: home });
      return { code, out: io.stdoutText(), err: io.stderrText() };
    };
    const before = await startHomeBackend(home, { drivers: { tunDevice: tun.open } });
    expect((await sbx(["sandbox", "create", "out", "--network"])).code).toBe(0);
    expect((await sbx(["sandbox", "show", "out"])).out).not.toContain("network_available");
    await before.close();
    const after = await startHomeBackend(home, { drivers: { tunDevice: tun.rootOnly } });
    cleanups.push(() => after.close());
    const shown = await sbx(["sandbox", "show", "out"]);
    expect(shown.out).toMatch(/^network\tuser \(outbound through slirp4netns/m);
    expect(shown.out).toContain(
      `\nnetwork_available\tno: ${tun.rootOnly} is mode 0600, owned by root: a sandbox's uid cannot open it`,
    );
    expect(shown.out).toMatch(/; its commands cannot start until this is fixed\n/);
    const json = JSON.parse((await sbx(["sandbox", "show", "out", "--json"])).out);
    expect(json.network_status).toEqual({ available: false, reason: expect.stringContaining("chmod 0666") });
  });
});

describe("sandbox rm of a workspace that holds files", () => {
  /** sbx on a terminal whose keys the test types once PROMPT is on stderr. */
  async function onTerminal(home: string, argv: string[], prompt: string, keys: string) {
    const typed = new PassThrough();
    const io = createBufferIO({ tty: true, keys: typed });
    const done = main(argv, io, { SBX_HOME: home });
    await until(() => io.stderrText().includes(prompt), 10_000, `the prompt ${JSON.stringify(prompt)}`);
    typed.write(keys);
    return { code: await done, err: io.stderrText() };
  }

  it("says what will be lost and asks on a terminal: no keeps it, yes removes it; off a terminal it needs --force", async () => {
    const home = makeHome("sbx-cli-rm-");
    const backend = await startHomeBackend(home, NO_BWRAP);
    cleanups.push(
      () => removeHome(home),
      () => backend.close(),
    );
    const sbx = async (argv: string[]) => {
      const io = createBufferIO();
      const code = await main(argv, io, { SBX_HOME: home });
      return { code, out: io.stdoutText(), err: io.stderrText() };
    };
    expect((await sbx(["sandbox", "create", "keep", "--isolation", "none"])).code).toBe(0);
    const wrote = await sbx(["exec", "-s", "keep", "--", "sh", "-c", "head -c 5000 /dev/zero > a; echo b > b"]);
    expect(wrote.code, wrote.err).toBe(0);
    expect((await sbx(["jobs", "run", "-s", "keep", "--", "true"])).code).toBe(0);

    const off = await sbx(["sandbox", "rm", "keep"]);
    expect(off.code).toBe(125);
    expect(off.err).toContain("removing sandbox keep deletes its workspace: 2 files (");
    expect(off.err).toContain("1 job with their logs");
    expect(off.err).toContain("sbx sandbox rm keep --force");

    const no = await onTerminal(home, ["sandbox", "rm", "keep"], "Remove sandbox keep", "n\r");
    expect(no.code).toBe(125);
    expect(no.err).toContain("2 files (");
    expect(no.err).toContain("sandbox keep was not removed");
    expect((await sbx(["exec", "-s", "keep", "--", "cat", "b"])).out).toBe("b\n");

    const yes = await onTerminal(home, ["sandbox", "rm", "keep"], "Remove sandbox keep", "y\r");
    expect(yes.code, yes.err).toBe(0);
    expect((await sbx(["sandbox", "show", "keep"])).code).toBe(125);

    // An empty workspace goes without a question, as before.
    expect((await sbx(["sandbox", "create", "empty", "--isolation", "none"])).code).toBe(0);
    expect((await sbx(["sandbox", "rm", "empty"])).code).toBe(0);
  });
});
