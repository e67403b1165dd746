// API keys reach the server and nowhere else: not stdout, not stderr, not any file
// under SBX_HOME except the 0600 credentials file. In-process through main().

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { filesUnder, makeHome, modeOf, removeHome, type SbxResult } from "../support/cli.js";
import { useClientDeadlines } from "../support/client-deadline.js";
import { runMain } from "../support/in-process.js";
import {
  type Behaviour,
  behaviours,
  type MisbehavingServer,
  refusedPort,
  startMisbehavingServer,
} from "../support/misbehaving-server.js";

const ENV_KEY = "sk-test-SECRET123";
const PROFILE_KEY = "sk-prof-SECRET789";
const KEYS = [ENV_KEY, PROFILE_KEY];

async function setup(t: TestContext): Promise<{ home: string; server: MisbehavingServer; outputs: SbxResult[] }> {
  const home = makeHome("sbx-e2e-secrets-");
  t.onTestFinished(() => removeHome(home));
  const server = await startMisbehavingServer();
  t.onTestFinished(() => server.close());
  return { home, server, outputs: [] };
}

/** Every file under SBX_HOME but the credentials file must be free of both keys, byte for byte. */
function expectNoKeyInFiles(home: string, expected: string[]): void {
  const files = filesUnder(home);
  expect(files.map((f) => path.basename(f))).toEqual(expect.arrayContaining(expected));
  for (const f of files) {
    if (path.basename(f) === "credentials.json") continue;
    const bytes = fs.readFileSync(f);
    for (const k of KEYS) expect(bytes.includes(k), `${k} found in ${f}`).toBe(false);
  }
}

function expectNoKeyInOutputs(outputs: SbxResult[]): void {
  for (const o of outputs) {
    for (const k of KEYS) {
      expect(o.stdout.includes(k), `${k} on stdout: ${o.stdout}`).toBe(false);
      expect(o.stderr.includes(k), `${k} on stderr: ${o.stderr}`).toBe(false);
    }
  }
}

const deadline = useClientDeadlines();

describe("API keys", () => {
  it("are sent as Authorization: ApiKey and never printed or stored outside the 0600 credentials file", async (t) => {
    const { home, server, outputs } = await setup(t);
    const run = async (args: string[], env: Record<string, string> = {}, input?: string) => {
      const r = await runMain(args, { home, env, ...(input === undefined ? {} : { input }) });
      outputs.push(r);
      return r;
    };

    const added = await run(["profile", "add", "remote", "--api-url", server.url, "--api-key-stdin"], {}, PROFILE_KEY);
    expect(added.code, added.stderr).toBe(0);
    const credentials = path.join(home, "credentials.json");
    expect(modeOf(credentials).toString(8)).toBe("600");
    expect(fs.readFileSync(credentials, "utf8")).toContain(PROFILE_KEY);

    // The key from the environment, with --api-url: success, then failures.
    const viaEnv = { SBX_API_KEY: ENV_KEY };
    expect((await run(["exec", "--api-url", server.url, "--", "echo", "hi"], viaEnv)).code).toBe(0);
    expect(server.posts()[0]!.headers.authorization).toBe(`ApiKey ${ENV_KEY}`);
    // The client's deadline passes once the server has the request (test/support/client-deadline.ts).
    const passes = deadline(1237);
    const hangThenDeadline: Behaviour = () => {
      passes.abort();
      return { kind: "hang" };
    };
    const failures: Array<[Behaviour, number, string[]]> = [
      [behaviours.failed(3), 3, []],
      [behaviours.unauthorized(), 125, ["--json"]],
      [behaviours.gateway502(), 255, []],
      [behaviours.reset(), 255, ["--json"]],
      [hangThenDeadline, 255, ["--client-timeout", "1237ms"]],
    ];
    for (const [b, code, flags] of failures) {
      server.setBehaviour(b);
      const r = await run(["exec", "--api-url", server.url, ...flags, "--", "echo", "hi"], viaEnv);
      expect(r.code, r.stderr).toBe(code);
    }
    const refused = await run(["exec", "--api-url", `http://127.0.0.1:${await refusedPort()}`, "--", "true"], viaEnv);
    expect(refused.code).toBe(75);

    // The key from the profile (no SBX_API_KEY).
    server.setBehaviour(behaviours.succeeded());
    const viaProfile = await run(["exec", "--profile", "remote", "--json", "--", "echo", "hi"]);
    expect(viaProfile.code, viaProfile.stderr).toBe(0);
    const posts = server.posts();
    expect(posts[posts.length - 1]!.headers.authorization).toBe(`ApiKey ${PROFILE_KEY}`);
    expect(posts.slice(0, -1).every((p) => p.headers.authorization === `ApiKey ${ENV_KEY}`)).toBe(true);
    const doc = JSON.parse(viaProfile.stdout) as ReceiptDocument;
    expect(doc.profile).toBe("remote");

    // Reading everything back, with and without the environment key.
    const reads = await Promise.all([
      run(["profile", "list"]),
      run(["profile", "list", "--json"], viaEnv),
      run(["profile", "show", "remote"]),
      run(["profile", "show", "remote", "--json"], viaEnv),
      run(["receipts", "list", "--json"]),
      run(["receipts", "show", doc.receipt_id, "--json"], viaEnv),
      run(["receipts", "export"]),
    ]);
    for (const r of reads) expect(r.code, r.stderr).toBe(0);
    expect(reads[3]!.stdout).toContain('"api_key": true');
    expect(reads[6]!.stdout.trim().split("\n")).toHaveLength(8);

    expectNoKeyInOutputs(outputs);
    expectNoKeyInFiles(home, ["receipts.db", "credentials.json", "config.json"]);
    expect(modeOf(credentials).toString(8)).toBe("600");
    expect(modeOf(path.join(home, "receipts.db")).toString(8)).toBe("600");
  });

  it("stay secret when a misbehaving server echoes the Authorization header back", async (t) => {
    const { home, server, outputs } = await setup(t);
    const echo =
      (status: number): Behaviour =>
      (req) => ({
        kind: "json",
        status,
        body: { error: { code: "unauthorized", message: `rejected credentials: ${req.headers.authorization}` } },
      });
    const viaEnv = { SBX_API_KEY: ENV_KEY };
    for (const [b, code] of [
      [echo(401), 125],
      [echo(500), 255],
    ] as const) {
      server.setBehaviour(b);
      const r = await runMain(["exec", "--api-url", server.url, "--", "echo", "hi"], { home, env: viaEnv });
      outputs.push(r);
      expect(r.code, r.stderr).toBe(code);
    }
    expect(server.posts().every((p) => p.headers.authorization === `ApiKey ${ENV_KEY}`)).toBe(true);
    outputs.push(await runMain(["receipts", "export"], { home, env: viaEnv }));
    expectNoKeyInOutputs(outputs);
    expectNoKeyInFiles(home, ["receipts.db"]);
  });
});
