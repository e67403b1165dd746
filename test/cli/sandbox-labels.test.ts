// Sandbox labels from the command line, in-process against the embedded backend over
// its real socket: set at create, changed by update (k=v, k-), shown, kept across a
// backend restart (backend.db), and selectors that choose what list, stop and rm act
// on — every match, said by name, asked on a terminal; nothing matched exits 125.

import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";
import { until } from "../support/wait.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const NO_BWRAP = { drivers: { bwrap: { program: "/nonexistent/bwrap" } } };

async function withBackend() {
  const home = makeHome("sbx-cli-labels-");
  let backend: BackendHandle = await startHomeBackend(home, NO_BWRAP);
  cleanups.push(
    () => removeHome(home),
    () => backend.close(),
  );
  const sbx = async (argv: string[]) => {
    const io = createBufferIO();
    const code = await main(argv, io, { SBX_HOME: home });
    return { code, out: io.stdoutText(), err: io.stderrText() };
  };
  const restart = async () => {
    await backend.close();
    backend = await startHomeBackend(home, NO_BWRAP);
  };
  /** sbx on a terminal whose keys the test types once PROMPT is on stderr. */
  const onTerminal = async (argv: string[], prompt: string, keys: string) => {
    const typed = new PassThrough();
    const io = createBufferIO({ tty: true, keys: typed });
    const done = main(argv, io, { SBX_HOME: home });
    await until(() => io.stderrText().includes(prompt), 10_000, `the prompt ${JSON.stringify(prompt)}`);
    typed.write(keys);
    return { code: await done, err: io.stderrText() };
  };
  return { sbx, restart, onTerminal };
}

const names = (out: string) => (JSON.parse(out).sandboxes as Array<{ name: string }>).map((s) => s.name).sort();

describe("sandbox labels", () => {
  it("are set at create, changed by update (k=v adds or replaces, k- removes), shown, and kept across a restart", async () => {
    const { sbx, restart } = await withBackend();
    const made = await sbx(["sandbox", "create", "w1", "--label", "team=web", "-l", "example.com/tier=ci", "--json"]);
    expect(made.code, made.err).toBe(0);
    expect(JSON.parse(made.out).labels).toEqual({ "example.com/tier": "ci", team: "web" });

    const updated = await sbx([
      "sandbox",
      "update",
      "w1",
      "--label",
      "team=api",
      "--label",
      "example.com/tier-",
      "-l",
      "owner=",
    ]);
    expect(updated.code, updated.err).toBe(0);
    expect(updated.out).toBe("labels\towner=,team=api\n");
    await restart();
    const shown = await sbx(["sandbox", "show", "w1"]);
    expect(shown.out).toContain("\nlabels\towner=,team=api\n");
    expect(JSON.parse((await sbx(["sandbox", "show", "w1", "--json"])).out).labels).toEqual({ owner: "", team: "api" });
    const listed = await sbx(["sandbox", "list", "--show-labels"]);
    expect(listed.out.split("\n")[0]).toMatch(/\tLABELS$/);
    expect(listed.out).toMatch(/\towner=,team=api\n/);
  });

  it("refuses a label that is not one, before and at the backend, changing nothing", async () => {
    const { sbx } = await withBackend();
    const bad = await sbx(["sandbox", "create", "b1", "--label", "team=a b"]);
    expect(bad.code).toBe(125);
    expect(bad.err).toContain('--label team=a b: label team: its value "a b" must be empty or 1-63 characters');
    const noEquals = await sbx(["sandbox", "create", "b1", "--label", "team"]);
    expect(noEquals.code).toBe(125);
    expect(noEquals.err).toContain('--label takes KEY=VALUE, not "team"');
    expect((await sbx(["sandbox", "list", "--json"])).out).not.toContain("b1");
    const badSelector = await sbx(["sandbox", "list", "--label", "-team"]);
    expect(badSelector.code).toBe(125);
    expect(badSelector.err).toContain('label key "-team"');
  });

  it("select what list shows: every selector must hold (k=v, k, k!=v, !k); nothing matched says so, exit 125", async () => {
    const { sbx } = await withBackend();
    for (const [name, ...labels] of [
      ["w1", "team=web", "tier=ci"],
      ["w2", "team=web"],
      ["a1", "team=api", "tier=ci"],
      ["plain"],
    ] as string[][]) {
      const made = await sbx(["sandbox", "create", name!, ...labels.flatMap((l) => ["--label", l])]);
      expect(made.code, made.err).toBe(0);
    }
    const list = async (...sel: string[]) =>
      names((await sbx(["sandbox", "list", "--json", ...sel.flatMap((s) => ["--label", s])])).out);
    expect(await list("team=web")).toEqual(["w1", "w2"]);
    expect(await list("team=web", "tier")).toEqual(["w1"]);
    expect(await list("team!=web")).toEqual(["a1", "plain"]);
    expect(await list("team", "!tier")).toEqual(["w2"]);
    expect(await list("tier=ci,team=api")).toEqual(["a1"]);
    const none = await sbx(["sandbox", "list", "--label", "team=db"]);
    expect(none.code).toBe(125);
    expect(none.out).toBe("");
    expect(none.err).toContain("no sandbox matches --label team=db");
  });

  it("choose what stop and rm act on: every match, named; asked on a terminal, --yes off one; nothing matched exits 125", async () => {
    const { sbx, onTerminal } = await withBackend();
    for (const [name, label] of [
      ["w1", "team=web"],
      ["w2", "team=web"],
      ["a1", "team=api"],
    ]) {
      expect((await sbx(["sandbox", "create", name!, "--label", label!])).code).toBe(0);
    }
    const noMatch = await sbx(["sandbox", "stop", "--label", "team=db", "--yes"]);
    expect(noMatch.code).toBe(125);
    expect(noMatch.err).toContain("no sandbox matches --label team=db");
    const both = await sbx(["sandbox", "stop", "w1", "--label", "team=web"]);
    expect(both.code).toBe(125);
    expect(both.err).toContain("give a sandbox or --label, not both");

    const offTerminal = await sbx(["sandbox", "rm", "--label", "team=web"]);
    expect(offTerminal.code).toBe(125);
    expect(offTerminal.err).toContain("--label team=web matches 2 sandbox(es): w1, w2");
    expect(offTerminal.err).toContain("not done without --yes (no terminal to ask on)");

    const stopped = await sbx(["sandbox", "stop", "--label", "team=web", "--yes"]);
    expect(stopped.code, stopped.err).toBe(0);
    expect(stopped.err).toContain("sandbox w1 was not running; nothing to stop");
    expect(stopped.err).toContain("sandbox w2 was not running; nothing to stop");
    expect(stopped.err).not.toContain("a1");

    const declined = await onTerminal(["sandbox", "rm", "--label", "team=web"], "Remove all 2?", "n\r");
    expect(declined.code).toBe(125);
    expect(declined.err).toContain("--label team=web matches 2 sandbox(es): w1, w2");
    expect(names((await sbx(["sandbox", "list", "--json"])).out)).toEqual(["a1", "w1", "w2"]);

    const removed = await onTerminal(["sandbox", "rm", "--label", "team=web"], "Remove all 2?", "y\r");
    expect(removed.code, removed.err).toBe(0);
    expect(removed.err).toContain("removed sandbox w1 and its workspace");
    expect(removed.err).toContain("removed sandbox w2 and its workspace");
    expect(names((await sbx(["sandbox", "list", "--json"])).out)).toEqual(["a1"]);
  });

  it("rm --label leaves a busy sandbox, saying so, and removes the rest; --force ends what runs first", async () => {
    const { sbx } = await withBackend();
    for (const name of ["busy", "idle"]) {
      expect((await sbx(["sandbox", "create", name, "--label", "pool=x"])).code).toBe(0);
    }
    const started = await sbx(["process", "start", "-s", "busy", "--", "sleep", "600"]);
    expect(started.code, started.err).toBe(0);
    const partly = await sbx(["sandbox", "rm", "--label", "pool=x", "--yes"]);
    expect(partly.code).not.toBe(0);
    expect(partly.err).toContain(
      "sbx: remove sandbox busy: sandbox busy has 1 supervised process(es) not ended; stop them, or remove it with force",
    );
    expect(partly.err).toContain("removed sandbox idle");
    expect(names((await sbx(["sandbox", "list", "--json"])).out)).toEqual(["busy"]);
    const forced = await sbx(["sandbox", "rm", "--label", "pool=x", "--yes", "--force", "--json"]);
    expect(forced.code, forced.err).toBe(0);
    expect(JSON.parse(forced.out)).toEqual({ removed: ["busy"] });
  });
});
