// The executable's entry, shared by bin/sbx (Node) and the Bun-compiled binary:
// run one command, let stdout/stderr drain (pipes are asynchronous), then exit.
// This and bin/ are the only places that end the process. No top-level await: the
// Node bundle is CommonJS (scripts/bundle-node.mjs).
// The release binary is also each sandbox's init (docs/drivers.md, "Entering"), when
// the backend starts it inside a sandbox with the hidden verb; on Node the backend
// runs the init's own file instead.

import { flushStdio } from "../platform/stdio.js";
import { main } from "./main.js";

const SANDBOX_INIT_VERB = "__sandbox-init";

if (process.argv[2] === SANDBOX_INIT_VERB) {
  void import("../sandbox-init/init.js").then((init) => init.runInit());
} else {
  void main(process.argv.slice(2), undefined, undefined, { exitsAfter: true }).then(async (code) => {
    await flushStdio();
    process.exit(code);
  });
}
