// Wire schema of a sandbox's stats (docs/operations.md, "Sandbox stats"; GET
// /sandbox/{id}/stats), declared once (see base.ts).

import { Count, named, Nullable, type Static, StringEnum, StringMap, Type } from "./base.js";

export const SandboxStats = named(
  "SandboxStats",
  Type.Object({
    sandbox_id: Type.String(),
    name: Type.String(),
    state: StringEnum(["running", "starting", "paused", "stopped", "none"], {
      description:
        "Its environment's state (paused: frozen by sbx sandbox pause); none: its driver keeps no environment (none).",
    }),
    sampled_at: Type.String({ description: "When these figures were read (ISO 8601)." }),
    cpu_usage_us: Nullable(
      Count({
        description:
          "CPU time of every process of it so far, microseconds; CPU % is the difference of two samples over the time between them.",
      }),
    ),
    cpus_limit: Nullable(Type.Number({ description: "Its CPU limit in cores; null: none." })),
    memory_bytes: Nullable(Count({ description: "Memory charged to its cgroup now (its pages, page cache, /tmp)." })),
    memory_peak_bytes: Nullable(Count({ description: "The most charged at once since its environment started." })),
    memory_limit_bytes: Nullable(Count()),
    pids: Nullable(Count({ description: "Processes and threads in it now." })),
    pids_limit: Nullable(Count()),
    tmp_bytes: Nullable(Count({ description: "Bytes used in its /tmp (a tmpfs of its own)." })),
    tmp_limit_bytes: Nullable(Count()),
    workspace_bytes: Nullable(Count({ description: "Its workspace's files on disk." })),
    net_rx_bytes: Nullable(Count({ description: "Bytes received on its interfaces but loopback." })),
    net_tx_bytes: Nullable(Count({ description: "Bytes sent on its interfaces but loopback." })),
    unavailable: StringMap(Type.String(), { description: "Each figure that is null here: why." }),
    measured_by: Type.String(),
  }),
);
export type SandboxStats = Static<typeof SandboxStats>;
