// sbx process logs shows both streams by default, as docker logs and kubectl logs
// users expect: the process's stdout on stdout, its stderr on stderr (marked on a
// terminal); --stream picks one, and offsets belong to one stream.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";

let home: string;
let backend: BackendHandle;
let id: string;

async function sbx(argv: string[], opts: { tty?: boolean; color?: boolean } = {}) {
  const io = createBufferIO(opts);
  const code = await main(argv, io, { SBX_HOME: home });
  return { code, out: io.stdoutText(), err: io.stderrText() };
}

beforeAll(async () => {
  home = makeHome("sbx-process-logs-");
  backend = await startHomeBackend(home);
  // Like python3 -m http.server: what it says goes to stderr.
  const started = await sbx(["process", "start", "--", "sh", "-c", "echo served; echo 'GET / 200' >&2"]);
  expect(started.code, started.err).toBe(0);
  id = started.out.trim();
  await sbx(["process", "result", id, "--wait", "10s"]);
});
afterAll(async () => {
  await backend.close();
  removeHome(home);
});

describe("sbx process logs", () => {
  it("prints both streams by default: stdout to stdout, stderr to stderr", async () => {
    const r = await sbx(["process", "logs", id, "-f"]);
    expect(r.code).toBe(0);
    expect(r.out).toBe("served\n");
    // The process's stderr and nothing of sbx's: where to read on from is for --verbose.
    expect(r.err).toBe("GET / 200\n");
    const verbose = await sbx(["process", "logs", id, "-f", "--verbose"]);
    expect(verbose.err).toContain("next offset stdout 7, stderr 10");
  });

  it("marks the process's stderr on a terminal", async () => {
    const r = await sbx(["process", "logs", id], { tty: true, color: true });
    expect(r.out).toBe("served\n");
    expect(r.err).toContain("\u001b[31mGET / 200\u001b[39m\n");
  });

  it("--stream picks one; offsets need it", async () => {
    expect((await sbx(["process", "logs", id, "--stream", "stderr"])).out).toBe("GET / 200\n");
    const refused = await sbx(["process", "logs", id, "--offset", "3"]);
    expect(refused.code).toBe(125);
    expect(refused.err).toContain("add --stream stdout or --stream stderr");
    const json = await sbx(["process", "logs", id, "--json"]);
    const docs = json.out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(docs.map((d) => [d.stream, Buffer.from(d.data, "base64").toString()]).sort()).toEqual([
      ["stderr", "GET / 200\n"],
      ["stdout", "served\n"],
    ]);
  });
});
