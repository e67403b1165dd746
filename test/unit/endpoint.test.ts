// Which backend a command talks to: flag > environment > profile > default.

import fs from "node:fs";
import os from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/common/errors.js";
import { parseApiUrl, resolveEndpoint } from "../../src/client/endpoint.js";
import { ConfigStore } from "../../src/config/config.js";
import { resolvePaths } from "../../src/config/paths.js";
import { tempDir } from "../support/temp.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

function setup() {
  const home = tempDir("sbx-ep-");
  homes.push(home);
  const env = { SBX_HOME: home };
  const paths = resolvePaths(env);
  const config = new ConfigStore(paths);
  config.update((d) => {
    d.profiles.staging = { api_url: "https://staging.example:8443" };
    d.profiles.prod = { api_url: "https://prod.example" };
    d.current_profile = "staging";
  });
  config.setApiKey("staging", "key-staging");
  return { home, env, paths, config };
}

describe("resolveEndpoint", () => {
  it("uses the current profile, its URL and its stored key", () => {
    const { env, paths, config } = setup();
    expect(resolveEndpoint({}, env, config, paths)).toMatchObject({
      profile: "staging",
      apiUrl: "https://staging.example:8443",
      apiKey: "key-staging",
      autoStart: false,
    });
  });

  it("lets the environment override the profile, and flags override the environment", () => {
    const { env, paths, config } = setup();
    const withEnv = { ...env, SBX_PROFILE: "prod", SBX_API_KEY: "key-env" };
    expect(resolveEndpoint({}, withEnv, config, paths)).toMatchObject({
      profile: "prod",
      apiUrl: "https://prod.example",
      apiKey: "key-env",
    });
    expect(
      resolveEndpoint(
        { profile: "staging", apiUrl: "http://127.0.0.1:9000" },
        { ...withEnv, SBX_API_URL: "http://env:1" },
        config,
        paths,
      ),
    ).toMatchObject({ profile: null, apiUrl: "http://127.0.0.1:9000", apiKey: "key-env" });
    expect(resolveEndpoint({}, { ...env, SBX_API_URL: "http://env:1" }, config, paths).apiUrl).toBe("http://env:1");
  });

  it("names no profile, and sends no profile's key, where a URL given directly sends the request elsewhere", () => {
    const { env, paths, config } = setup();
    // The receipt must not say `staging` (or `local`) for a request that went to another backend.
    expect(resolveEndpoint({}, { ...env, SBX_API_URL: "http://elsewhere:1" }, config, paths)).toMatchObject({
      profile: null,
      apiUrl: "http://elsewhere:1",
      apiKey: null,
      autoStart: false,
    });
    // The profile's own URL, given again: still that profile, with its key.
    expect(
      resolveEndpoint({}, { ...env, SBX_API_URL: "https://staging.example:8443/api/v1" }, config, paths),
    ).toMatchObject({ profile: "staging", apiKey: "key-staging" });
    const home = tempDir("sbx-ep-");
    homes.push(home);
    const localPaths = resolvePaths({ SBX_HOME: home });
    const elsewhere = resolveEndpoint(
      {},
      { SBX_HOME: home, SBX_API_URL: "unix:/tmp/someone-else.sock" },
      new ConfigStore(localPaths),
      localPaths,
    );
    expect(elsewhere).toMatchObject({ profile: null, socketPath: "/tmp/someone-else.sock", autoStart: false });
  });

  it("defaults to the local profile on the daemon's socket, started on demand", () => {
    const home = tempDir("sbx-ep-");
    homes.push(home);
    const paths = resolvePaths({ SBX_HOME: home });
    const ep = resolveEndpoint({}, { SBX_HOME: home }, new ConfigStore(paths), paths);
    expect(ep).toMatchObject({ profile: "local", socketPath: paths.socketPath, autoStart: true, apiKey: null });
    expect(ep.apiUrl).toBe(`unix:${paths.socketPath}`);
  });

  it("refuses an unknown profile with a hint", () => {
    const { env, paths, config } = setup();
    expect(() => resolveEndpoint({ profile: "nope" }, env, config, paths)).toThrow(ConfigError);
  });
});

describe("parseApiUrl", () => {
  it.each([
    ["https://h.example/api/v1", "https://h.example", null],
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080", null],
    ["unix:/run/sbx.sock", "unix:/run/sbx.sock", "/run/sbx.sock"],
    ["unix:///run/sbx.sock", "unix:/run/sbx.sock", "/run/sbx.sock"],
  ])("%s", (url, apiUrl, socketPath) => {
    expect(parseApiUrl(url)).toMatchObject({ apiUrl, socketPath });
  });

  it.each(["ftp://x", "not a url", "https://user:pw@h.example", "unix:relative.sock"])("refuses %s", (url) => {
    expect(() => parseApiUrl(url)).toThrow(ConfigError);
  });
});

describe("resolvePaths", () => {
  it("puts everything under SBX_HOME, else config and state under XDG dirs", () => {
    expect(resolvePaths({ SBX_HOME: "/h" })).toMatchObject({
      configFile: "/h/config.json",
      receiptsDb: "/h/receipts.db",
    });
    expect(resolvePaths({ HOME: "/u", XDG_CONFIG_HOME: "/c", XDG_STATE_HOME: "/s" })).toMatchObject({
      configFile: "/c/sbx/config.json",
      receiptsDb: "/s/sbx/receipts.db",
      socketPath: "/s/sbx/daemon/daemon.sock",
    });
    expect(resolvePaths({ HOME: "/u" }).receiptsDb).toBe("/u/.local/state/sbx/receipts.db");
  });

  it("moves a socket whose path would be too long into a short private directory", () => {
    const deep = `/tmp/${"d".repeat(120)}`;
    const p = resolvePaths({ SBX_HOME: deep });
    expect(Buffer.byteLength(p.socketPath)).toBeLessThanOrEqual(100);
    expect(p.socketPath.startsWith(os.tmpdir())).toBe(true);
  });
});
