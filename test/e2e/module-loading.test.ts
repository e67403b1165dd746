// What a command loads: a fresh `node dist/cli/entry.js …` (the modules tsc built, the
// entry bin/sbx runs bundled) with a loader hook that records every module it imports
// (ESM through the hook, CommonJS from require's cache at exit). --version and --help
// load no client, store or backend code; exec loads no table, spinner, prompt or docs
// code; a verb's command module loads only when it runs. (The Node bundle and the
// release binary are built from the same modules: these are their lazy seams.)

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeHome, REPO_ROOT, removeHome, SBX_BIN, sbxEnv } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";

const DIST = path.join(REPO_ROOT, "dist");
const ENTRY = path.join(DIST, "cli", "entry.js");

/** The modules a command loaded: files under dist/ (relative) and packages by name. */
interface Loaded {
  own: string[];
  packages: string[];
  /** Every file loaded, by path. */
  files: string[];
  code: number | null;
  stdout: string;
  stderr: string;
}

let home: string;
let hooks: string;

function loadedBy(args: string[], entry = ENTRY): Loaded {
  const out = path.join(home, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  const r = spawnSync(
    process.execPath,
    ["--import", pathToFileURL(path.join(hooks, "register.mjs")).href, "--", entry, ...args],
    {
      env: { ...sbxEnv(home), SBX_LOADED_OUT: out },
      encoding: "utf8",
      timeout: 30_000,
    },
  );
  const urls = fs.existsSync(out) ? fs.readFileSync(out, "utf8").split("\n").filter(Boolean) : [];
  const files = urls.map((u) => (u.startsWith("file://") ? new URL(u).pathname : u));
  const own = [...new Set(files.filter((f) => f.startsWith(DIST + path.sep)).map((f) => path.relative(DIST, f)))];
  const packages = [
    ...new Set(
      files.map((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)?.[1]).filter((p): p is string => p !== undefined),
    ),
  ];
  return { own: own.sort(), packages: packages.sort(), files, code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Client, store and backend code (and what they load). The fault grammar's help text is only text. */
const SERVICE_CODE = [
  /^client\//,
  /^receipts\/store\.js$/,
  /^platform\/sqlite\.js$/,
  /^platform\/http-transport\.js$/,
  /^backend\/(?!http\/fault-spec-help\.js$)/,
];
const SERVICE_PACKAGES = ["undici", "better-sqlite3", "eventsource-parser", "tar-stream"];
/** What only people at a terminal need: tables, spinners, prompts, the docs generators. */
const TERMINAL_CODE = [/^cli\/render\/table\.js$/, /^cli\/docs\/(?!shells\.js$)/];
const TERMINAL_PACKAGES = ["cli-table3", "ora", "@inquirer/prompts", "@inquirer/core"];

const matching = (own: string[], patterns: RegExp[]) => own.filter((f) => patterns.some((p) => p.test(f)));

beforeAll(() => {
  home = makeHome("sbx-e2e-loading-");
  hooks = path.join(home, "hooks");
  fs.mkdirSync(hooks);
  // The hook thread records each module as it is loaded; require's cache is read at exit.
  fs.writeFileSync(
    path.join(hooks, "hooks.mjs"),
    `import fs from "node:fs";
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) {
  if (out) fs.appendFileSync(out, url + "\\n");
  return next(url, context);
}
`,
  );
  fs.writeFileSync(
    path.join(hooks, "register.mjs"),
    `import fs from "node:fs";
import { createRequire, register } from "node:module";
const out = process.env.SBX_LOADED_OUT;
register("./hooks.mjs", import.meta.url, { data: { out } });
const require = createRequire(import.meta.url);
process.on("exit", () => {
  fs.appendFileSync(out, Object.keys(require.cache).map((f) => "file://" + f).join("\\n") + "\\n");
});
`,
  );
});

afterAll(async () => {
  await stopDaemon(home);
  removeHome(home);
});

describe("what a command loads (node dist/cli/entry.js)", () => {
  it("--version and --help load no client, store or backend code, and no verb's run code", () => {
    for (const args of [["--version"], ["--help"], ["receipts", "list", "--help"], ["exec", "--help"]]) {
      const got = loadedBy(args);
      expect(got.code, got.stderr).toBe(0);
      expect(got.stdout.length).toBeGreaterThan(0);
      // The tree was loaded (the hook sees it), but nothing a command needs to run.
      expect(got.own).toContain("cli/program.js");
      expect({ args, service: matching(got.own, SERVICE_CODE) }).toEqual({ args, service: [] });
      expect({ args, packages: got.packages.filter((p) => SERVICE_PACKAGES.includes(p)) }).toEqual({
        args,
        packages: [],
      });
      expect({
        args,
        verbs: got.own.filter((f) => /^cli\/commands\/.+\.js$/.test(f) && !f.endsWith("index.js")),
      }).toEqual({
        args,
        verbs: [],
      });
      expect(got.own).not.toContain("cli/context.js");
    }
  });

  it("exec loads its own command module and no table, spinner, prompt or docs code", () => {
    const got = loadedBy(["exec", "--", "true"]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.own).toContain("cli/commands/exec.js");
    expect(got.own).toContain("client/http.js");
    expect(matching(got.own, TERMINAL_CODE)).toEqual([]);
    expect(got.packages.filter((p) => TERMINAL_PACKAGES.includes(p))).toEqual([]);
    // The store's addon is loaded from where it is built, not searched for by the `bindings` package.
    expect(got.packages).toContain("better-sqlite3");
    expect(got.packages).not.toContain("bindings");
    // No other verb's run code.
    const verbs = got.own.filter((f) => /^cli\/commands\/[^/]+\.js$/.test(f) && f !== "cli/commands/index.js");
    expect(verbs).toEqual(["cli/commands/exec.js"]);
  });

  it("a verb's command module is loaded when that verb runs (receipts list, on a terminal or not)", () => {
    const got = loadedBy(["receipts", "list"]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.own).toContain("cli/commands/receipts/list.js");
    expect(got.own).toContain("receipts/store.js");
    expect(got.own.filter((f) => /^cli\/commands\/receipts\/(?!index|list)/.test(f))).toEqual([]);
    expect(matching(got.own, SERVICE_CODE).filter((f) => f.startsWith("backend/"))).toEqual([]);
  });
});

describe("what a command reads of the Node bundle (node bin/sbx)", () => {
  const BUNDLE = path.join(DIST, "node", "entry.cjs");
  const chunks = (got: Loaded) => got.own.filter((f) => f.startsWith(`node${path.sep}`));

  // The global setup builds the bundle (test/support/global-setup.ts): never skipped.
  it("a warm exec reads a dozen or so chunks, --version fewer", () => {
    // Node costs about 0.4 ms per file it loads (as ESM; less as CommonJS): code three or more chunks share
    // is one common chunk (scripts/bundle-node.mjs), where a split by the exact set of
    // commands using each module had a warm exec read 44.
    expect(loadedBy(["exec", "--", "true"], BUNDLE).code).toBe(0);
    const exec = loadedBy(["exec", "--", "true"], BUNDLE);
    expect(exec.code, exec.stderr).toBe(0);
    expect(chunks(exec).length).toBeGreaterThan(1);
    expect(chunks(exec).length).toBeLessThanOrEqual(15);
    const version = loadedBy(["--version"], BUNDLE);
    expect(version.code, version.stderr).toBe(0);
    expect(chunks(version).length).toBeLessThan(chunks(exec).length);
    // better-sqlite3's JavaScript is in the bundle: of the package, only its addon is loaded.
    expect(exec.files.filter((f) => f.includes("node_modules/better-sqlite3/"))).toEqual([
      expect.stringMatching(/better-sqlite3\/build\/Release\/better_sqlite3\.node$/),
    ]);
    // The backend is a chunk of its own, read only by the daemon.
    expect(exec.own.filter((f) => /^node\/daemon-(?!launcher)/.test(f))).toEqual([]);
  });

  it("node bin/sbx runs CommonJS: Node's ESM loader is not started", () => {
    const out = path.join(home, "builtins.txt");
    const dump = path.join(home, "dump-builtins.cjs");
    fs.writeFileSync(
      dump,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));`,
    );
    const r = spawnSync(process.execPath, ["-r", dump, "--", SBX_BIN, "exec", "--", "true"], {
      env: sbxEnv(home),
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const builtins = fs.readFileSync(out, "utf8").split("\n");
    // What resolves, reads and translates ES modules (with fs/promises and readline under it).
    expect(builtins.filter((m) => /internal\/modules\/esm\/(translators|module_job|resolve)$/.test(m))).toEqual([]);
  });
});
