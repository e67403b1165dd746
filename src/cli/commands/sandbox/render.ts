// Sandboxes for people.

import type { Sandbox } from "../../../protocol/types.js";
import type { IO } from "../../io/io.js";
import { formatTime, printTable } from "../../render/table.js";

export function printSandboxes(io: IO, sandboxes: Sandbox[]): void {
  printTable(
    io,
    ["SANDBOX", "NAME", "STATUS", "ISOLATION", "NETWORK", "CREATED"],
    sandboxes.map((s) => [
      s.sandbox_id,
      s.name,
      s.status,
      s.isolation,
      s.network ? "yes" : "no",
      formatTime(io, s.created_at),
    ]),
  );
}
