// The release binary run inside an untrusted checkout (a pull request, an agent's
// work): Bun-compiled executables read a bunfig.toml and a .env from the directory
// they run in unless told not to, and a bunfig.toml's `preload` runs its script before
// sbx's first line. Attacked here as a user meets it, as root: sbx run from the checkout
// (the daemon it starts works in its own directory), and a sandbox whose workspace
// holds the same files (its init is the same binary, started there). Nothing of them
// may run, nothing of the .env may be believed (SBX_API_URL would send the command,
// and the key, elsewhere).

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BUILD_HOOK_TIMEOUT_MS, buildReleaseBinary } from "../support/binary.js";
import { makeHome, removeHome, sbxEnv } from "../support/cli.js";
import { describeNeeding } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";

/** A checkout's runtime configuration: a preload that leaves a file per process it ran in. */
function plant(dir: string, markers: string, apiUrl: string): void {
  fs.writeFileSync(path.join(dir, "bunfig.toml"), 'preload = ["./preload.js"]\n');
  fs.writeFileSync(
    path.join(dir, "preload.js"),
    `require("node:fs").writeFileSync(${JSON.stringify(markers)} + "/ran-" + process.pid, process.argv.join(" "));\n`,
  );
  fs.writeFileSync(path.join(dir, ".env"), `SBX_API_URL=${apiUrl}\nSBX_PROFILE=hostile\nSBX_HOSTILE_DOTENV=1\n`);
}

describeNeeding("binary", "the release binary in a hostile checkout", () => {
  let home: string;
  let binary: string;
  let server: net.Server;
  let connections = 0;
  let apiUrl: string;

  beforeAll(async () => {
    home = makeHome("sbx-bin-cwd-");
    binary = path.join(home, "sbx");
    buildReleaseBinary(binary);
    // Where a .env believed would send the request: a listener that counts who came.
    server = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    apiUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  }, BUILD_HOOK_TIMEOUT_MS);

  afterAll(async () => {
    spawnSync(binary, ["daemon", "stop"], { env: sbxEnv(home), timeout: 30_000 });
    await new Promise((resolve) => server.close(resolve));
    removeHome(home);
  });

  it("runs no bunfig.toml preload and believes no .env of the directory it runs in", () => {
    const checkout = tempDir("sbx-hostile-checkout-");
    const markers = tempDir("sbx-hostile-markers-");
    plant(checkout, markers, apiUrl);
    const run = (args: string[]) =>
      spawnSync(binary, args, { cwd: checkout, env: sbxEnv(home), encoding: "utf8", timeout: 60_000 });
    // The first command also starts the daemon.
    const r = run(["exec", "--", "sh", "-c", 'echo "ok ${SBX_HOSTILE_DOTENV:-unset}"']);
    expect(r.stderr).not.toMatch(/hostile/);
    expect({ code: r.status, stdout: r.stdout }).toEqual({ code: 0, stdout: "ok unset\n" });
    expect(run(["daemon", "status"]).status).toBe(0);
    const [receipt] = JSON.parse(run(["receipts", "list", "--json"]).stdout) as Array<{ api_url: string }>;
    expect(receipt?.api_url).toMatch(/^unix:/);
    expect(connections).toBe(0);
    expect(fs.readdirSync(markers)).toEqual([]);
  });

  it("runs no preload a sandbox's workspace holds (the init is the same binary)", () => {
    const env = sbxEnv(home);
    const run = (args: string[]) => spawnSync(binary, args, { env, encoding: "utf8", timeout: 60_000 });
    expect(run(["sandbox", "create", "hostile-workspace"]).status).toBe(0);
    const shown = JSON.parse(run(["sandbox", "show", "hostile-workspace", "--json"]).stdout) as {
      host_workspace: string;
    };
    // The preload would run inside the sandbox, where /workspace is this directory.
    plant(shown.host_workspace, "/workspace", apiUrl);
    // A new environment: its init starts now, with the files in place.
    expect(run(["sandbox", "stop", "hostile-workspace"]).status).toBe(0);
    const r = run(["exec", "-s", "hostile-workspace", "--", "sh", "-c", "echo ran; ls /workspace"]);
    expect({ code: r.status, stdout: r.stdout }).toEqual({ code: 0, stdout: "ran\nbunfig.toml\npreload.js\n" });
    expect(fs.readdirSync(shown.host_workspace).filter((f) => f.startsWith("ran-"))).toEqual([]);
    expect(connections).toBe(0);
  });
});
