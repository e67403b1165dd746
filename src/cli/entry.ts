// The executable's entry, shared by bin/sbx (Node) and the Bun-compiled binary:
// run one command, let stdout/stderr drain (pipes are asynchronous), then exit.
// This and bin/ are the only places that end the process.

import { flushStdio } from "../platform/stdio.js";
import { main } from "./main.js";

const code = await main(process.argv.slice(2), undefined, undefined, { exitsAfter: true });
await flushStdio();
process.exit(code);
