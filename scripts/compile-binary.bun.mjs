// Run by Bun (scripts/build-binary.mjs starts it): compiles the release binary.
// Usage: bun scripts/compile-binary.bun.mjs OUTFILE
//
// ES modules with code splitting: every module a command imports dynamically (each
// command's module, the backend, the init, ora, @inquirer/prompts, tar-stream…) is a
// chunk embedded in the binary and loaded when first imported. A single ES module
// bundle would link every Node builtin any module imports before its first line runs
// (node:http, node:tty, streams…); a single CommonJS bundle loads each builtin only
// where it is used, but its bytecode is loaded whole at start-up, the backend's with
// the CLI's (BENCHMARKS.md, "Start-up"). The verify worker is an entry point of its
// own (src/platform/threads.ts addresses it from src/). better-sqlite3's JavaScript is
// compiled in (src/platform/better-sqlite3.ts imports it, for the Node bundle) but
// never loaded: the binary uses bun:sqlite (src/platform/sqlite.ts).

import path from "node:path";

const root = path.resolve(import.meta.dir, "..");
const outfile = process.argv[2];
if (!outfile) {
  console.error("usage: bun scripts/compile-binary.bun.mjs OUTFILE");
  process.exit(2);
}
/**
 * chalk detects the terminal's colours when it is loaded (its vendored supports-color:
 * node:tty, and through it node:net and the streams): about 2.3 ms of every command's
 * start in the binary (BENCHMARKS.md). sbx never uses what it detects — every Chalk it
 * makes is given its level by src/cli/io/io.ts (NO_COLOR, FORCE_COLOR, TERM, --no-color,
 * whether the stream is a terminal) — so the binary's copy of that module detects
 * nothing. Fails the build when the module is no longer where this expects it.
 */
const SUPPORTS_COLOR = /[\\/]node_modules[\\/]chalk[\\/]source[\\/]vendor[\\/]supports-color[\\/]index\.js$/;
let colourDetectionReplaced = false;
const chalkLevelsFromSbx = {
  name: "chalk-levels-from-sbx",
  setup(build) {
    build.onLoad({ filter: SUPPORTS_COLOR }, () => {
      colourDetectionReplaced = true;
      return {
        contents:
          "export function createSupportsColor() { return false; }\nexport default { stdout: false, stderr: false };\n",
        loader: "js",
      };
    });
  },
};

const result = await Bun.build({
  entrypoints: [path.join(root, "src", "cli", "entry.ts"), path.join(root, "src", "receipts", "verify-worker.ts")],
  // Nothing of the directory sbx is run in configures its runtime: a bunfig.toml there
  // (its `preload` runs code before sbx's first line) or a .env (SBX_API_URL, keys) is an
  // untrusted checkout's, never the user's (test/e2e/binary-cwd.test.ts attacks both).
  compile: {
    outfile,
    autoloadBunfig: false,
    autoloadDotenv: false,
    autoloadTsconfig: false,
    autoloadPackageJson: false,
  },
  target: "bun",
  format: "esm",
  splitting: true,
  minify: true,
  bytecode: true,
  plugins: [chalkLevelsFromSbx],
});
for (const log of result.logs) console.error(String(log));
if (!result.success) process.exit(1);
if (!colourDetectionReplaced) {
  console.error("chalk's colour detection (source/vendor/supports-color/index.js) was not found: see this script");
  process.exit(1);
}
console.log(`compiled ${path.relative(process.cwd(), outfile) || outfile}`);
