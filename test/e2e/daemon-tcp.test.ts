// A daemon listening on TCP (`sbx daemon run --listen`) writes its token 0600 and
// requires it: a request without it is refused (125), with it the command runs.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeHome, removeHome } from "../support/cli.js";
import { startForegroundDaemon, stopForegroundDaemon } from "../support/daemon.js";
import { runMain } from "../support/in-process.js";
import { refusedPort } from "../support/misbehaving-server.js";

describe("a daemon listening on TCP", () => {
  it("requires its token: refused (125) without it, runs with it", async () => {
    const home = makeHome("sbx-e2e-tcp-");
    const port = await refusedPort();
    const daemon = await startForegroundDaemon(home, ["--listen", `127.0.0.1:${port}`]);
    try {
      const url = `http://127.0.0.1:${port}`;
      const without = await runMain(["exec", "--api-url", url, "--", "echo", "hi"], { home });
      expect(without.code).toBe(125);
      expect(without.stderr).toContain("unauthorized");
      const token = fs.readFileSync(path.join(home, "daemon", "token"), "utf8").trim();
      const withToken = await runMain(["exec", "--api-url", url, "--", "echo", "hi"], {
        home,
        env: { SBX_API_KEY: token },
      });
      expect(withToken).toMatchObject({ code: 0, stdout: "hi\n" });
      expect(fs.statSync(path.join(home, "daemon", "token")).mode & 0o777).toBe(0o600);
    } finally {
      await stopForegroundDaemon(daemon);
      removeHome(home);
    }
  });
});
