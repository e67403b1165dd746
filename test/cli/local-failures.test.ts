// What goes wrong on this side, in-process through main(): a corrupt receipt store,
// a configuration file that does not parse, a bug, an oversized request, a state
// directory others could tamper with. None of them borrows an exit code a command
// could have given (1-123), none prints a stack trace, none sends anything.

import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBufferIO } from "../../src/cli/io/io.js";
import { describeError } from "../../src/cli/error-report.js";
import { main } from "../../src/cli/main.js";
import { makeHome, receiptsDbOf, removeHome } from "../support/cli.js";
import { startForegroundDaemon, stopForegroundDaemon } from "../support/daemon.js";
import {
  behaviours,
  type MisbehavingServer,
  refusedPort,
  startMisbehavingServer,
} from "../support/misbehaving-server.js";
import { itNeeding } from "../support/requirements.js";

let home: string;
let server: MisbehavingServer;
beforeEach(async () => {
  home = makeHome("sbx-local-");
  server = await startMisbehavingServer(behaviours.succeeded());
});
afterEach(async () => {
  await server.close();
  removeHome(home);
});

async function sbx(argv: string[], env: Record<string, string> = {}, stdin?: Buffer) {
  const io = createBufferIO(stdin === undefined ? {} : { stdin });
  const code = await main(argv, io, { SBX_HOME: home, ...env });
  return { code, out: io.stdoutText(), err: io.stderrText() };
}

const STACK = /^\s+at /m;

describe("a corrupt receipt store", () => {
  beforeEach(() => {
    fs.writeFileSync(receiptsDbOf(home), Buffer.alloc(8192, "not a database at all "));
  });

  it.each([
    ["exec", ["exec", "--api-url", "URL", "--", "echo", "hi"]],
    ["receipts list", ["receipts", "list"]],
    ["receipts show", ["receipts", "show", "rcp_anything"]],
    ["receipts export", ["receipts", "export"]],
    ["recover", ["recover"]],
  ])("%s: exit 74, the file and the cause named, no stack trace, nothing sent", async (_name, argv) => {
    const r = await sbx(argv.map((a) => (a === "URL" ? server.url : a)));
    expect(r.code).toBe(74);
    expect(r.err).toContain(`the receipt store ${receiptsDbOf(home)} is unusable`);
    expect(r.err).toContain("corrupt");
    expect(r.err).toContain("nothing was sent");
    expect(r.err).toMatch(/hint: move it aside/);
    expect(r.err).not.toMatch(STACK);
    expect(r.err).not.toContain("internal error");
    expect(r.out).toBe("");
    expect(server.requests).toHaveLength(0);
  });
});

describe("a configuration file that does not parse or validate", () => {
  it.each([
    ["not JSON", "{ profiles: "],
    ["not an object", "[1, 2]"],
    ["a profile without an api_url", JSON.stringify({ version: 1, profiles: { prod: { url: "x" } } })],
    ["a setting that is not a string", JSON.stringify({ version: 1, profiles: {}, settings: { timeout: 5 } })],
    ["a setting out of its range", JSON.stringify({ version: 1, profiles: {}, settings: { timeout: "2h" } })],
  ])("%s: exit 78, naming the file; nothing sent", async (_what, text) => {
    fs.writeFileSync(path.join(home, "config.json"), text);
    const r = await sbx(["exec", "--api-url", server.url, "--", "echo", "hi"]);
    expect(r.code).toBe(78);
    expect(r.err).toContain(path.join(home, "config.json"));
    expect(r.err).not.toMatch(STACK);
    expect(server.requests).toHaveLength(0);
  });
});

describe("an internal error (a bug)", () => {
  it("is exit 70, never 1, with the stack only when --verbose asks for it", () => {
    const bug = new TypeError("cannot read properties of undefined (reading 'x')");
    const plain = describeError(bug, { SBX_HOME: home });
    expect(plain.exit).toBe(70);
    expect(plain.lines[0]).toBe(
      "sbx: internal error (a bug in sbx): cannot read properties of undefined (reading 'x')",
    );
    expect(plain.lines.join("\n")).not.toMatch(STACK);
    const verbose = describeError(bug, { SBX_HOME: home }, { verbose: true });
    expect(verbose.exit).toBe(70);
    expect(verbose.lines.join("\n")).toMatch(STACK);
  });
});

describe("a request body over the backend's limit", () => {
  it("is refused before anything is stored or sent (125), pointing to copying the file in", async () => {
    const big = Buffer.alloc(13 * 1024 * 1024, 7); // base64 makes it over 16 MiB
    const r = await sbx(["exec", "--api-url", server.url, "--stdin", "--", "wc", "-c"], {}, big);
    expect(r.code).toBe(125);
    expect(r.err).toContain("over the 16.0 MiB a backend accepts; nothing was sent");
    expect(r.err).toContain("sbx cp");
    expect(server.requests).toHaveLength(0);
    const list = await sbx(["receipts", "list", "--json"]);
    expect(JSON.parse(list.out)).toEqual([]);
  });
});

describe("a state directory others could tamper with", () => {
  it("group- or world-writable: refused with exit 74 and how to fix it; nothing sent", async () => {
    fs.chmodSync(home, 0o770);
    const r = await sbx(["exec", "--api-url", server.url, "--", "echo", "hi"]);
    expect(r.code).toBe(74);
    expect(r.err).toContain(`refusing to use ${home}: group or others may write to it (mode 0770)`);
    expect(r.err).toContain(`chmod 700 ${home}`);
    expect(server.requests).toHaveLength(0);
    fs.chmodSync(home, 0o757);
    expect((await sbx(["receipts", "list"])).code).toBe(74);
    expect((await sbx(["profile", "list"])).code).toBe(74);
  });

  itNeeding(
    "root",
    "owned by another user (chown as root): refused for every command that reads or writes it",
    async () => {
      fs.chownSync(home, 12345, 12345);
      for (const argv of [
        ["exec", "--api-url", server.url, "--", "echo", "hi"],
        ["receipts", "list"],
        ["profile", "list"],
        ["daemon", "status"],
      ]) {
        const r = await sbx(argv);
        expect({ argv, code: r.code }).toEqual({ argv, code: 74 });
        expect(r.err).toContain(`refusing to use ${home}: it belongs to uid 12345, not to you (uid 0)`);
      }
      expect(server.requests).toHaveLength(0);
      // Nothing was created in it either (no socket, no receipts.db).
      expect(fs.readdirSync(home)).toEqual([]);
      fs.chownSync(home, 0, 0);
    },
  );

  itNeeding(
    "root",
    "reached through a symlink another user owns (lchown as root), as SBX_HOME or on its way: refused with 74",
    async (t) => {
      const links = makeHome("sbx-links-");
      t.onTestFinished(() => removeHome(links));
      const link = path.join(links, "home");
      fs.symlinkSync(home, link);
      fs.lchownSync(link, 12345, 12345);
      for (const sbxHome of [link, path.join(link, "sub")]) {
        const r = await sbx(["receipts", "list"], { SBX_HOME: sbxHome });
        expect({ sbxHome, code: r.code }).toEqual({ sbxHome, code: 74 });
        expect(r.err).toContain(
          `refusing to use ${link}: it is a symlink owned by uid 12345, not by you (uid 0) or root`,
        );
      }
      expect(fs.readdirSync(home)).toEqual([]);
      // The same symlink, the user's own: used, and everything lands in the real directory.
      fs.lchownSync(link, 0, 0);
      const own = await sbx(["config", "set", "timeout", "30s"], { SBX_HOME: link });
      expect(own.code, own.err).toBe(0);
      expect(fs.existsSync(path.join(home, "config.json"))).toBe(true);
    },
  );
});

describe("a TCP daemon needs a strong token", () => {
  it("a short SBX_DAEMON_TOKEN, or a short token file, is refused before anything listens (125)", async () => {
    const port = String(await refusedPort());
    const fromEnv = await sbx(["daemon", "run", "--listen", `127.0.0.1:${port}`], { SBX_DAEMON_TOKEN: "i" });
    expect(fromEnv.code).toBe(125);
    expect(fromEnv.err).toContain("SBX_DAEMON_TOKEN is 1 characters; a TCP listener needs a token of at least 32");
    fs.writeFileSync(path.join(home, "daemon", "token"), "short\n", { mode: 0o600 });
    const fromFile = await sbx(["daemon", "run", "--listen", `127.0.0.1:${port}`]);
    expect(fromFile.code).toBe(125);
    expect(fromFile.err).toContain(`remove ${path.join(home, "daemon", "token")} to have a strong one generated`);
  });
});

describe("receipts say where the request really went", () => {
  it("SBX_API_URL elsewhere: the receipt names that URL and no profile, not `local`", async () => {
    const r = await sbx(["exec", "--json", "--", "echo", "hi"], { SBX_API_URL: server.url });
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out) as { profile: string | null; api_url: string };
    expect(doc).toMatchObject({ profile: null, api_url: server.url });
    const shown = await sbx(["receipts", "show", (JSON.parse(r.out) as { receipt_id: string }).receipt_id]);
    expect(shown.out).toMatch(new RegExp(`Backend\\s+\\(no profile\\)  ${server.url}`));
  });
});

describe("an API key is kept out of what is shown or stored, never out of what is parsed", () => {
  it("SBX_API_KEY=i: a plain successful remote exec succeeds, its output intact; an echoed key is still redacted", async () => {
    const r = await sbx(["exec", "--api-url", server.url, "--json", "--", "echo", "hi", "in", "it"], {
      SBX_API_KEY: "i",
    });
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ classification: "succeeded", exit: 0, stdout: "hi in it\n" });
    expect(server.posts()[0]!.headers.authorization).toBe("ApiKey i");
    const plain = await sbx(["exec", "--api-url", server.url, "--", "echo", "hi"], { SBX_API_KEY: "i" });
    expect(plain).toMatchObject({ code: 0, out: "hi\n" });

    // Redacted where it is shown or stored: a key a server echoes back in a message.
    server.setBehaviour((req) => ({
      kind: "json",
      status: 500,
      body: { error: { code: "internal_error", message: `saw ${req.headers.authorization}` } },
    }));
    const key = "sk-long-secret-key-123";
    const echoed = await sbx(["exec", "--api-url", server.url, "--json", "--", "true"], { SBX_API_KEY: key });
    expect(echoed.code).toBe(255);
    expect(echoed.out + echoed.err).not.toContain(key);
    expect(JSON.parse(echoed.out).error.message).toBe("saw ApiKey [redacted]");
    expect(fs.readFileSync(receiptsDbOf(home)).includes(key)).toBe(false);
  });
});

describe("daemon run --faults", () => {
  it("names a bad fault spec (125) even while a daemon already runs", async () => {
    const daemon = await startForegroundDaemon(home, []);
    try {
      const r = await sbx(["daemon", "run", "--faults", "bogus"]);
      expect(r.code).toBe(125);
      expect(r.err).toContain('fault rule 1 "bogus"');
    } finally {
      await stopForegroundDaemon(daemon);
    }
  });
});
