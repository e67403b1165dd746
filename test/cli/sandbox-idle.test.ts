// `--idle-timeout` from the command line, in-process against the embedded backend:
// create and update set it (0/off, default), show says it and whose it is, and a bad
// value is refused before anything is sent. The stop itself: test/backend/idle-stop.test.ts.

import { afterEach, describe, expect, it } from "vitest";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function withBackend() {
  const home = makeHome("sbx-cli-idle-");
  const backend = await startHomeBackend(home, {
    drivers: { bwrap: { program: "/nonexistent/bwrap" } },
    sandboxIdleTimeoutMs: 30 * 60_000,
  });
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

describe("sandbox --idle-timeout", () => {
  it("is set at create, changed by update (off, default), and said by show", async () => {
    const sbx = await withBackend();
    const made = await sbx(["sandbox", "create", "w", "--idle-timeout", "15m", "--json"]);
    expect(made.code, made.err).toBe(0);
    expect(JSON.parse(made.out).idle_timeout_ms).toBe(900_000);
    const shown = await sbx(["sandbox", "show", "w"]);
    expect(shown.out).toContain(
      "\nidle_stop\tafter 15m with nothing running (its own); it has no environment to stop (isolation none)\n",
    );
    const off = await sbx(["sandbox", "update", "w", "--idle-timeout", "off"]);
    expect(off.code, off.err).toBe(0);
    expect(off.out).toBe("idle_stop\toff (its own)\n");
    const back = await sbx(["sandbox", "update", "w", "--idle-timeout", "default", "--json"]);
    expect(JSON.parse(back.out)).toMatchObject({
      idle_timeout_ms: null,
      idle: { timeout_ms: 1_800_000, from: "daemon" },
    });
  });

  it.each([["500ms"], ["soon"], ["-1s"], ["default"]])("refuses --idle-timeout %s at create, exit 125", async (v) => {
    const sbx = await withBackend();
    const res = await sbx(["sandbox", "create", "w", "--idle-timeout", v]);
    expect(res.code).toBe(125);
    expect(res.err).toContain(`--idle-timeout ${JSON.stringify(v)}: a duration from 1s to 365d`);
    expect((await sbx(["sandbox", "list", "--json"])).out).not.toContain('"w"');
  });
});
