// The executable's entry, shared by bin/sbx (Node) and the Bun-compiled binary:
// run one command, let stdout/stderr drain (pipes are asynchronous), then exit.
// This and bin/ are the only places that end the process. No top-level await: the
// Node bundle is CommonJS (scripts/bundle-node.mjs).

import { flushStdio } from "../platform/stdio.js";
import { main } from "./main.js";

void main(process.argv.slice(2), undefined, undefined, { exitsAfter: true }).then(async (code) => {
  await flushStdio();
  process.exit(code);
});
