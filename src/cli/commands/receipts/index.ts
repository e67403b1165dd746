// sbx receipts: the local record of everything sbx sent.

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import * as exportCmd from "./export.js";
import * as list from "./list.js";
import * as prune from "./prune.js";
import * as refresh from "./refresh.js";
import * as resubmit from "./resubmit.js";
import * as show from "./show.js";
import * as wait from "./wait.js";

export function register(program: Command, bind: Bind): void {
  const noun = program
    .command("receipts")
    .summary("inspect, observe and resubmit receipts")
    .description(
      "Every mutation sbx sends is first written as a receipt: the Idempotency-Key, the exact\n" +
        "request bytes, where it was sent. Observations are appended as answers and reads arrive.\n" +
        "A receipt is named by its id (rcp_…), its execution id, its idempotency key, or a unique prefix.",
    );
  list.register(noun, bind);
  show.register(noun, bind);
  wait.register(noun, bind);
  refresh.register(noun, bind);
  resubmit.register(noun, bind);
  exportCmd.register(noun, bind);
  prune.register(noun, bind);
  withExamples(noun, [
    { command: "sbx receipts list", description: "what ran, newest first" },
    { command: "sbx receipts show rcp_0mhx", description: "one receipt: what was sent, every answer" },
    { command: "sbx receipts wait rcp_0mhx", description: "observe an execution in doubt until it settles" },
  ]);
}
