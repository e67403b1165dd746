// sbx init, in-process: the prompts are driven through the IO seam (keys on a stream
// that stands in for the terminal); without a terminal it refuses and names the flags.

import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type BufferIO, createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { makeHome, removeHome } from "../support/cli.js";

const KEY = "sk-init-test-4f2a";
const DOWN = "\u001b[B";
const ENTER = "\r";

/** A backend that only answers health, and remembers the Authorization headers it saw. */
let server: http.Server;
let serverUrl: string;
const seenAuth: Array<string | undefined> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seenAuth.push(req.headers.authorization);
    if (req.url === "/api/v1/health") {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          ok: true,
          version: "9.9.9",
          protocol: 1,
          backend: "test",
          started_at: new Date().toISOString(),
        }),
      );
    } else {
      res.statusCode = 404;
      res.end("{}");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

let home: string;
beforeEach(() => {
  home = makeHome("sbx-init-");
  seenAuth.length = 0;
});
afterEach(() => removeHome(home));

const configOf = () => JSON.parse(fs.readFileSync(path.join(home, "config.json"), "utf8"));
const credentialsOf = () => JSON.parse(fs.readFileSync(path.join(home, "credentials.json"), "utf8"));

async function runInit(argv: string[], io: BufferIO, env: NodeJS.ProcessEnv = {}): Promise<number> {
  return main(argv, io, { SBX_HOME: home, ...env });
}

/** A terminal: keys are written to `keys` once the prompt they answer is on stderr. */
function terminal() {
  const keys = new PassThrough();
  const io = createBufferIO({ tty: true, keys });
  let seen = 0;
  const answer = async (prompt: string, input: string) => {
    const until = Date.now() + 5_000;
    for (;;) {
      const at = io.stderrText().indexOf(prompt, seen);
      if (at >= 0) {
        seen = at + prompt.length;
        break;
      }
      if (Date.now() > until) throw new Error(`no prompt ${JSON.stringify(prompt)} in:\n${io.stderrText()}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    keys.write(input);
  };
  return { io, answer };
}

describe("sbx init without a terminal", () => {
  it("refuses with exit 125, names the flags to pass and changes nothing", async () => {
    const io = createBufferIO();
    expect(await runInit(["init"], io)).toBe(125);
    expect(io.stdoutText()).toBe("");
    expect(io.stderrText()).toContain("no terminal");
    expect(io.stderrText()).toContain("sbx init --yes");
    expect(io.stderrText()).toContain("sbx init --profile-name NAME --api-url URL --api-key-stdin");
    expect(fs.existsSync(path.join(home, "config.json"))).toBe(false);
  });

  it("--yes takes the defaults: the embedded backend, current", async () => {
    fs.writeFileSync(
      path.join(home, "config.json"),
      JSON.stringify({ version: 1, current_profile: "prod", profiles: { prod: { api_url: serverUrl } }, settings: {} }),
    );
    const io = createBufferIO();
    expect(await runInit(["init", "--yes", "--json"], io)).toBe(0);
    expect(JSON.parse(io.stdoutText())).toMatchObject({
      profile: "local",
      current: true,
      backend: "embedded",
      health: "starts_on_demand",
      api_key: false,
    });
    expect(io.stderrText()).toContain("starts on demand");
    expect(configOf().current_profile).toBe("local");
    expect(configOf().profiles.prod).toEqual({ api_url: serverUrl }); // left alone
  });

  it("flags for a remote backend: the key from stdin, the health checked with it", async () => {
    const io = createBufferIO({ stdin: `${KEY}\n` });
    const code = await runInit(
      ["init", "--profile-name", "prod", "--api-url", serverUrl, "--api-key-stdin", "--json"],
      io,
    );
    expect(code).toBe(0);
    expect(JSON.parse(io.stdoutText())).toEqual({
      profile: "prod",
      api_url: serverUrl,
      api_key: true,
      insecure: false,
      current: true,
      backend: "remote",
      health: "ok",
    });
    expect(seenAuth).toEqual([`ApiKey ${KEY}`]);
    expect(configOf()).toMatchObject({ current_profile: "prod", profiles: { prod: { api_url: serverUrl } } });
    expect(credentialsOf().api_keys).toEqual({ prod: KEY });
    expect(io.stdoutText() + io.stderrText()).not.toContain(KEY);
  });

  it("an unreachable backend is saved with a warning, and said so", async () => {
    const io = createBufferIO();
    expect(await runInit(["init", "--profile-name", "far", "--api-url", "http://127.0.0.1:1", "--json"], io)).toBe(0);
    expect(JSON.parse(io.stdoutText())).toMatchObject({ profile: "far", health: "unreachable", api_key: false });
    expect(io.stderrText()).toContain("did not answer");
  });

  it.each([
    [["init", "--api-url", "https://x.example"], "--api-url needs --profile-name"],
    [["init", "--profile-name", "prod"], "needs --api-url"],
    [["init", "--profile-name", "local", "--api-url", "https://x.example"], "cannot be redefined"],
    [["init", "--profile-name", "bad name", "--api-url", "https://x.example"], "invalid profile name"],
    [["init", "--profile-name", "p", "--api-url", "ftp://x"], "unsupported API URL scheme"],
    [["init", "--yes", "--api-key-stdin"], "--api-key-stdin goes with --api-url"],
  ])("%j is refused before anything is saved", async (argv, message) => {
    const io = createBufferIO();
    expect(await runInit(argv, io)).toBe(125);
    expect(io.stderrText()).toContain(message);
    expect(fs.existsSync(path.join(home, "config.json"))).toBe(false);
  });
});

describe("sbx init on a terminal", () => {
  it("Enter at the first question: the embedded backend", async () => {
    const { io, answer } = terminal();
    const done = runInit(["init"], io);
    await answer("Which backend should sbx use?", ENTER);
    expect(await done).toBe(0);
    expect(io.stdoutText()).toBe("");
    expect(configOf().current_profile).toBe("local");
  });

  it("a remote backend: name, URL and a hidden key; checked, saved, current", async () => {
    const { io, answer } = terminal();
    const done = runInit(["init", "--json"], io);
    await answer("Which backend should sbx use?", DOWN);
    await answer("a remote backend", ENTER);
    await answer("Profile name", `prod${ENTER}`);
    await answer("API URL", `${serverUrl}${ENTER}`);
    await answer("API key", `${KEY}${ENTER}`);
    expect(await done).toBe(0);
    expect(JSON.parse(io.stdoutText())).toEqual({
      profile: "prod",
      api_url: serverUrl,
      api_key: true,
      insecure: false,
      current: true,
      backend: "remote",
      health: "ok",
    });
    expect(seenAuth).toEqual([`ApiKey ${KEY}`]);
    expect(credentialsOf().api_keys).toEqual({ prod: KEY });
    // The key was typed, never shown.
    expect(io.stderrText()).not.toContain(KEY);
    expect(io.stderrText()).toContain("answered (version 9.9.9)");
  });

  it("a key for plain http:// to another machine: asked whether it may travel in clear; no saves nothing", async () => {
    const { io, answer } = terminal();
    const done = runInit(["init"], io);
    await answer("Which backend should sbx use?", `${DOWN}${ENTER}`);
    await answer("Profile name", `lab${ENTER}`);
    await answer("API URL", `http://192.0.2.1:7070${ENTER}`);
    await answer("API key", `${KEY}${ENTER}`);
    await answer("Send it anyway?", `n${ENTER}`);
    expect(await done).toBe(125);
    expect(io.stderrText()).toContain("nothing was saved: the key would travel in clear");
    expect(fs.existsSync(path.join(home, "config.json"))).toBe(false);
    expect(seenAuth).toEqual([]);
  });

  it("checks answers as they are typed: a bad URL is asked again", async () => {
    const { io, answer } = terminal();
    const done = runInit(["init"], io);
    await answer("Which backend should sbx use?", `${DOWN}${ENTER}`);
    await answer("Profile name", ENTER); // the default: remote
    await answer("API URL", `ftp://nope${ENTER}`);
    await answer("unsupported API URL scheme", "\u0015"); // Ctrl-U clears the line
    await answer("API URL", `${serverUrl}${ENTER}`);
    await answer("API key", ENTER); // none
    expect(await done).toBe(0);
    expect(configOf()).toMatchObject({ current_profile: "remote", profiles: { remote: { api_url: serverUrl } } });
    expect(fs.existsSync(path.join(home, "credentials.json")) ? credentialsOf().api_keys : {}).toEqual({});
  });

  it("an unreachable backend is only saved when the person says so", async () => {
    const { io, answer } = terminal();
    const done = runInit(["init"], io);
    await answer("Which backend should sbx use?", `${DOWN}${ENTER}`);
    await answer("Profile name", `far${ENTER}`);
    await answer("API URL", `http://127.0.0.1:1${ENTER}`);
    await answer("API key", ENTER);
    await answer("Save profile far anyway?", ENTER); // default: no
    expect(await done).toBe(130);
    expect(io.stderrText()).toContain("nothing was saved");
    expect(fs.existsSync(path.join(home, "config.json"))).toBe(false);
  });

  it("Ctrl-C cancels with exit 130 and saves nothing", async () => {
    const { io, answer } = terminal();
    const done = runInit(["init"], io);
    await answer("Which backend should sbx use?", "\u0003");
    expect(await done).toBe(130);
    expect(io.stderrText()).toContain("init cancelled; nothing was saved");
    expect(fs.existsSync(path.join(home, "config.json"))).toBe(false);
  });
});

describe("--api-key-stdin on a terminal", () => {
  it("asks with a password prompt on stderr that never shows the key", async () => {
    const { io, answer } = terminal();
    const done = runInit(["profile", "add", "prod", "--api-url", serverUrl, "--api-key-stdin"], io);
    await answer("API key (not shown)", `${KEY}\r`);
    expect(await done).toBe(0);
    expect(credentialsOf().api_keys).toEqual({ prod: KEY });
    expect(io.stderrText()).not.toContain(KEY);
    expect(io.stdoutText()).not.toContain(KEY);
  });
});
