// Run by `npm install` (postinstall), before the build: is the SQLite driver sbx uses on
// Node (better-sqlite3, a native addon) installed and loadable? It is an optional
// dependency so that npm does not stop at its own failure (a prebuilt binary that
// cannot be downloaded, a build from source without Node's headers) with a page of
// gyp errors; this check then stops the install and says what to do instead: the
// README section "Installing offline or behind a firewall" (test/docs/readme.test.ts
// holds the two to the same command).
//
// Usage: node scripts/check-install.mjs [module]   (module: better-sqlite3)

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const moduleName = process.argv[2] ?? "better-sqlite3";

try {
  const Database = require(moduleName);
  new Database(":memory:").close();
} catch (err) {
  const why = String(err?.message ?? err).split("\n")[0];
  process.stderr.write(
    [
      "",
      `sbx: ${moduleName} (the SQLite driver sbx uses on Node) did not install: ${why}`,
      "",
      "npm downloads a prebuilt binary of it, or else builds it from source, which needs",
      "python3, make, a C++ compiler and this Node's headers; node-gyp downloads the headers",
      "from nodejs.org unless told where they are. On a machine that reaches only the npm",
      "registry, build it against the headers installed with Node:",
      "",
      '  npm_config_nodedir="$(dirname "$(dirname "$(command -v node)")")" npm install',
      "",
      'See README.md, "Installing offline or behind a firewall".',
      "",
    ].join("\n"),
  );
  process.exit(1);
}
