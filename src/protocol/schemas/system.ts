// Wire schemas of the backend itself, its sandboxes and their files (docs/protocol.md),
// each declared once: types.ts re-exports their types; openapi/document.ts publishes them.

import { VolumeMount } from "./volumes.js";
import { Count, described, named, Nullable, type Static, StringEnum, Timestamp, Type } from "./base.js";
import { NAME_PATTERN } from "../types.js";

export const Isolation = named("Isolation", StringEnum(["none", "bwrap", "slurm"]));
export type Isolation = Static<typeof Isolation>;
/** `auto`: the daemon's Slurm driver when it was started with one (`--driver slurm`), else bwrap where it works, else none. */
export type IsolationRequest = Isolation | "auto";

export const DriverProbeStatus = named(
  "DriverProbeStatus",
  Type.Object({
    available: Type.Boolean(),
    reason: Nullable(Type.String(), { description: "Why it is not available and what to install; null when it is." }),
    version: Nullable(Type.String()),
  }),
);
export type DriverProbeStatus = Static<typeof DriverProbeStatus>;

export const IsolationStatus = named(
  "IsolationStatus",
  Type.Object({
    default: described(Isolation, "What `auto` (and the `default` sandbox) gets on this backend."),
    bwrap: DriverProbeStatus,
    none: DriverProbeStatus,
    slurm: Type.Optional(
      described(DriverProbeStatus, "The Slurm driver (sbx daemon run --driver slurm): whether the cluster answers."),
    ),
    user_network: Type.Optional(
      described(DriverProbeStatus, "What carries network_mode user (slirp4netns), and whether it can here (sbx)."),
    ),
  }),
);
export type IsolationStatus = Static<typeof IsolationStatus>;

export const LimitName = named("LimitName", StringEnum(["memory", "pids", "cpu", "tmp", "workspace"]));
export type LimitName = Static<typeof LimitName>;

const limitFields = {
  memory_bytes: Nullable(Count({ minimum: 16 * 1024 * 1024 }), {
    description:
      "Memory (and swap) of every process of the sandbox together; past it the kernel kills one (out_of_memory).",
  }),
  pids: Nullable(Count({ minimum: 8 }), {
    description: "Processes and threads alive at once in the sandbox (a fork past it fails with EAGAIN).",
  }),
  cpus: Nullable(Type.Number({ minimum: 0.01 }), {
    description: "CPU time as a number of cores (1.5 = 150 ms per 100 ms).",
  }),
  tmp_bytes: Nullable(Count({ minimum: 1024 * 1024 }), {
    description:
      "Size of /tmp (and of /var/tmp and /dev/shm, each), a tmpfs: a write past it fails with ENOSPC; /dev itself is read-only.",
  }),
  workspace_bytes: Nullable(Count({ minimum: 16 * 1024 * 1024 }), {
    description:
      "Disk the workspace may take: a file system of its own of that size (a root daemon with loop devices; refused elsewhere). Set at create only.",
  }),
};

/** A sandbox's limits (sbx): null is "no limit". */
export const SandboxLimits = named("SandboxLimits", Type.Object(limitFields));
export type SandboxLimits = Static<typeof SandboxLimits>;

/** Limits asked for: a missing field is the backend's default (create) or unchanged (update); null lifts it. */
export const SandboxLimitsRequest = named(
  "SandboxLimitsRequest",
  Type.Partial(Type.Object(limitFields), { additionalProperties: false }),
);
export type SandboxLimitsRequest = Static<typeof SandboxLimitsRequest>;

/** Whether (and how) one limit is enforced: for a sandbox (`value` its limit) or the backend (`value` the default). */
export const LimitStatus = named(
  "LimitStatus",
  Type.Object({
    limit: LimitName,
    value: Nullable(Type.Number(), { description: "Bytes, processes or cores; null: no limit." }),
    enforced: Type.Boolean({ description: "The limit holds on this backend (false also when there is none)." }),
    how: Nullable(
      Type.String({ description: 'The mechanism, e.g. "cgroup v1 memory controller (memory.limit_in_bytes)".' }),
    ),
    reason: Nullable(Type.String({ description: "Why it is not enforced; null when it is." })),
  }),
);
export type LimitStatus = Static<typeof LimitStatus>;

export const Health = named(
  "Health",
  Type.Object({
    ok: Type.Boolean(),
    version: Type.String(),
    protocol: Type.Integer(),
    backend: Type.String({ description: '"local" for the embedded backend.' }),
    started_at: Timestamp(),
    boot: Type.Optional(
      Type.String({
        description:
          "This boot of the backend: drawn each time it starts (not the machine's boot). Runs record it; handles name it (sbx).",
      }),
    ),
    isolation: Type.Optional(
      described(IsolationStatus, "The embedded backend's sandbox drivers, as probed at its start (sbx)."),
    ),
    limits: Type.Optional(
      Type.Array(LimitStatus, {
        description: "Each resource limit: its default and whether and how this backend enforces it (sbx).",
      }),
    ),
  }),
);
export type Health = Static<typeof Health>;

/** GET /api/v1/storage (sbx): what the embedded backend keeps, its size, and its retention. */
export const StorageReport = named(
  "StorageReport",
  Type.Object({
    executions: Type.Object({
      kept: Count(),
      running: Count(),
      outputs_dropped: Count(),
      oldest_finished_at: Nullable(Timestamp()),
    }),
    processes: Type.Object({ kept: Count(), running: Count() }),
    bytes: Type.Object({ database: Count(), execution_output: Count(), process_logs: Count(), total: Count() }),
    retention: Type.Object({
      retain_ms: Count({
        description:
          "Finished executions and exited processes older than this go (never sooner than key_retention_ms).",
      }),
      retain_bytes: Count({
        description: "Past this total, the oldest finished outputs go first, then records past the key window.",
      }),
      key_retention_ms: Count({
        description: "Records a receipt may still ask about (by id or key) are kept at least this long.",
      }),
    }),
    last_sweep: Nullable(
      Type.Object({
        at: Timestamp(),
        deleted_executions: Count(),
        dropped_outputs: Count(),
        deleted_processes: Count(),
        over_limit_bytes: Count({
          description: "Bytes still over retain_bytes after the sweep: records inside the key window or running.",
        }),
      }),
    ),
  }),
);
export type StorageReport = Static<typeof StorageReport>;

/** How a sandbox reaches the network (docs/drivers.md, "Network modes"). */
export const NetworkMode = StringEnum(["none", "allow-list", "user", "host"], {
  description:
    "none: only the sandbox's own loopback; allow-list: no route out, only the destinations its egress policy allows, through a proxy of the backend's (sbx; docs/network.md); user: outbound through a user-mode stack (slirp4netns), never the host's loopback; host: the host's network itself (isolation none always has it).",
});
export type NetworkMode = Static<typeof NetworkMode>;

const domainList = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 256, description });

/** A sandbox's egress policy as asked (sbx; docs/network.md): each list optional (empty). */
export const EgressPolicyRequest = named(
  "EgressPolicyRequest",
  Type.Object(
    {
      allow_domains: Type.Optional(
        domainList("Names that may be reached: exact (pypi.org), or *.domain for every name below it."),
      ),
      deny_domains: Type.Optional(domainList("Names refused even where an allow pattern matches.")),
      allow_cidrs: Type.Optional(
        domainList(
          "Address ranges that may be reached (203.0.113.0/24, 2001:db8::/32, or one address), by literal or by what an allowed name resolves to; loopback, private and link-local ranges only so.",
        ),
      ),
    },
    { additionalProperties: false },
  ),
);
export type EgressPolicyRequest = Static<typeof EgressPolicyRequest>;

/** A sandbox's egress policy as it stands (sbx). */
export const EgressPolicy = named(
  "EgressPolicy",
  Type.Object({
    allow_domains: Type.Array(Type.String()),
    deny_domains: Type.Array(Type.String()),
    allow_cidrs: Type.Array(Type.String()),
  }),
);
export type EgressPolicy = Static<typeof EgressPolicy>;

/** A port to publish, as asked at create (sbx): the backend listens on the host and joins each connection to `port` inside. */
export const PublishRequest = named(
  "PublishRequest",
  Type.Object(
    {
      port: Type.Integer({ minimum: 1, maximum: 65535, description: "The port inside the sandbox, on its loopback." }),
      host_port: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 65535,
          description: "The host port; 0 (the default): one the system chooses.",
        }),
      ),
      host_ip: Type.Optional(Type.String({ description: "The host address to listen on; default 127.0.0.1." })),
    },
    { additionalProperties: false },
  ),
);
export type PublishRequest = Static<typeof PublishRequest>;

/** A published port as a sandbox shows it (sbx). */
export const PublishedPort = named(
  "PublishedPort",
  Type.Object({
    port: Type.Integer({ description: "The port inside the sandbox." }),
    host_ip: Type.String(),
    host_port: Type.Integer({ description: "The host port the backend listens on." }),
    listening: Type.Boolean({ description: "Whether the backend listens on it now." }),
    reason: Nullable(Type.String({ description: "Why it does not, or null." })),
  }),
);
export type PublishedPort = Static<typeof PublishedPort>;

/** A sandbox's labels (docs/protocol.md, "Labels"): Kubernetes' label syntax. */
export const Labels = named(
  "Labels",
  Type.Record(Type.String({ maxLength: 317 }), Type.String({ maxLength: 63 }), {
    maxProperties: 64,
    description:
      "(sbx) key: value. A key is [prefix/]name: name 1-63 of A-Z a-z 0-9 - _ . with an alphanumeric at each end, prefix a DNS subdomain; a value is empty or as a name.",
  }),
);

export const SandboxCreateRequest = named(
  "SandboxCreateRequest",
  Type.Object(
    {
      name: Type.Optional(Type.String({ pattern: NAME_PATTERN })),
      isolation: Type.Optional(StringEnum(["auto", "none", "bwrap", "slurm"], { default: "auto" })),
      network: Type.Optional(
        Type.Boolean({ default: false, description: "true: a network (network_mode user unless said); false: none." }),
      ),
      network_mode: Type.Optional(NetworkMode),
      egress: Type.Optional(
        described(
          EgressPolicyRequest,
          "(sbx) The destinations it may reach: network_mode allow-list (the default when this is given).",
        ),
      ),
      publish: Type.Optional(Type.Array(PublishRequest, { description: "(sbx) Ports to publish on the host." })),
      limits: Type.Optional(SandboxLimitsRequest),
      labels: Type.Optional(Labels),
      idle_timeout_ms: Type.Optional(
        Type.Integer({
          minimum: 0,
          description:
            "(sbx) Stop its environment after this long with nothing running in it (docs/operations.md, Idle stop): 0 off, else at least 1000. Missing: the daemon's default.",
        }),
      ),
      volumes: Type.Optional(
        Type.Array(VolumeMount, { description: '(sbx) Named volumes to mount (docs/operations.md, "Named volumes").' }),
      ),
      image: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 4096,
          description:
            "(sbx) An OCI image its root is made from: oci:DIR[:TAG] (an absolute directory), oci-archive:FILE[:TAG] (an absolute file) or a registry reference; pulled into the backend's store when it is not there (docs/images.md). Needs bwrap isolation.",
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type SandboxCreateRequest = Omit<Static<typeof SandboxCreateRequest>, "isolation"> & {
  isolation?: IsolationRequest;
};

/** A sandbox's live environment (docs/drivers.md, "One sandbox, one environment"). */
export const SandboxEnvironment = named(
  "SandboxEnvironment",
  Type.Object({
    state: StringEnum(["running", "starting", "paused", "stopped"], {
      description:
        "stopped: nothing runs; the next command (or POST …/start) starts it. paused: every process frozen (POST …/pause); POST …/resume thaws them.",
    }),
    started_at: Nullable(Timestamp()),
    init_pid: Nullable(Type.Integer({ description: "The host pid of its init." })),
    processes: Count({ description: "Processes in it now, its own two (bwrap's pid 1 and the init) included." }),
  }),
);
export type SandboxEnvironment = Static<typeof SandboxEnvironment>;

const sandboxFields = {
  sandbox_id: Type.String({ description: "sbx_…" }),
  name: Type.String(),
  status: Type.String({
    description:
      '"ready"; "paused" while its processes are frozen (POST …/pause); "deleted" in the answer of a DELETE.',
  }),
  isolation: Isolation,
  network: Type.Boolean({ description: "Whether its commands have a network beyond their own loopback." }),
  network_mode: NetworkMode,
  egress: Type.Optional(
    Nullable(EgressPolicy, {
      description: "(sbx) Its egress policy (network_mode allow-list); null for every other mode.",
    }),
  ),
  workspace: Type.Literal("/workspace"),
  created_at: Timestamp(),
  limits: Type.Optional(described(SandboxLimits, "The sandbox's resource limits (sbx).")),
  labels: Type.Optional(Labels),
  idle_timeout_ms: Type.Optional(
    Nullable(Type.Integer({ minimum: 0 }), {
      description: "(sbx) Its own idle timeout (0: off); null: the daemon's default (IdleStatus says which applies).",
    }),
  ),
  volumes: Type.Optional(Type.Array(VolumeMount, { description: "(sbx) The named volumes it mounts." })),
  image: Type.Optional(
    Nullable(
      Type.Object({
        reference: Type.String({ description: "The reference it was created from, as the backend read it." }),
        digest: Type.String({ description: "The manifest digest the reference was resolved to at create (sha256:…)." }),
        platform: Type.String({ description: "os/architecture[/variant]." }),
      }),
      {
        description:
          "(sbx) The image its root was made from (a writable copy of its own); null: the host's system directories, read-only.",
      },
    ),
  ),
  published: Type.Optional(
    Type.Array(PublishedPort, {
      description: "(sbx) Ports published on the host, each with the host port as bound (the one chosen for 0).",
    }),
  ),
};

export const Sandbox = named("Sandbox", Type.Object(sandboxFields));
export type Sandbox = Static<typeof Sandbox>;

/** Whether and when a sandbox's environment stops for idleness (docs/operations.md, "Idle stop"). */
export const IdleStatus = named(
  "IdleStatus",
  Type.Object({
    timeout_ms: Nullable(Type.Integer({ minimum: 1000 }), { description: "The timeout that applies; null: off." }),
    from: StringEnum(["sandbox", "daemon"], {
      description: "Whose it is: the sandbox's own, or the daemon's default.",
    }),
    stops_at: Nullable(Timestamp(), {
      description:
        "When its environment stops if nothing runs before; null when it runs something, is stopped or has no timeout.",
    }),
    awake: Type.Array(Type.String(), {
      description: 'What keeps it awake now, e.g. "1 execution", "2 supervised processes", "1 connection".',
    }),
    last_stop: Nullable(
      Type.Object({
        at: Timestamp(),
        reason: StringEnum(["idle", "requested"], {
          description: "idle: nothing ran for its timeout; requested: POST …/stop.",
        }),
      }),
      { description: "Its environment's last stop by the backend, or null." },
    ),
  }),
);
export type IdleStatus = Static<typeof IdleStatus>;

/** GET /sandbox/{id}: the sandbox with where and how its commands run (sbx). */
export const SandboxDetails = named(
  "SandboxDetails",
  Type.Object({
    ...sandboxFields,
    host_workspace: Nullable(Type.String(), {
      description:
        "The host directory behind /workspace (the embedded backend's own disk); null in answers over TCP, which never name a path of the backend's host.",
    }),
    workspace_bytes: Nullable(Count(), {
      description: "Bytes the workspace takes on disk; only with ?usage=true, else null.",
    }),
    workspace_files: Nullable(Count(), {
      description:
        "Files in the workspace (every entry that is not a directory: links too); only with ?usage=true, else null (sbx).",
    }),
    driver: Type.Object({
      isolation: Isolation,
      version: Nullable(Type.String()),
      user: Type.String({ description: "Who commands run as, inside and on the host." }),
      host_uid: Type.Integer({
        description: "The host uid commands run as: a sandbox's own unprivileged uid when the backend is root.",
      }),
      namespaces: Type.Array(Type.String()),
      host_paths_read_only: Nullable(Type.Array(Type.String())),
      syscall_filter: Nullable(Type.String({ description: "The syscall filter commands run under; null: none." })),
      slurm: Type.Optional(
        Type.Object(
          {
            job_id: Nullable(
              Type.String({ description: "The allocation's Slurm job id; null before one is submitted." }),
            ),
            state: Type.String({ description: "Slurm's state of the allocation (PENDING, RUNNING…), or none." }),
            reason: Nullable(
              Type.String({ description: "Slurm's reason while it is pending (Resources, Priority…)." }),
            ),
            node: Nullable(Type.String({ description: "The node Slurm chose; null until it runs." })),
            partition: Nullable(Type.String()),
          },
          { description: '(sbx) The sandbox\'s allocation, for isolation slurm (docs/drivers.md, "Slurm").' },
        ),
      ),
      available: Type.Boolean({ description: "Whether this sandbox's driver can run commands on this backend now." }),
      reason: Nullable(Type.String()),
    }),
    limit_status: Type.Optional(
      Type.Array(LimitStatus, { description: "Each of the sandbox's limits: whether and how it is enforced (sbx)." }),
    ),
    network_status: Type.Optional(
      Type.Object(
        {
          available: Type.Boolean({ description: "Whether its network mode can be had on this backend now." }),
          reason: Nullable(Type.String(), {
            description:
              "Why not, and the fix (e.g. for user: /dev/net/tun root-only, which a sandbox's uid cannot open); null when it can.",
          }),
        },
        {
          description:
            "Whether the sandbox's network mode can be had here now (sbx): where it cannot, its environment cannot start (sandbox_start_failed) until that is fixed.",
        },
      ),
    ),
    published: Type.Array(PublishedPort, { description: "Ports published on the host (sbx)." }),
    environment: Nullable(SandboxEnvironment, {
      description: "The sandbox's live environment (bwrap); null where each command runs on its own (none).",
    }),
    idle: Type.Optional(described(IdleStatus, "(sbx) Its idle stop: the timeout, when, and what keeps it awake.")),
  }),
);
export type SandboxDetails = Static<typeof SandboxDetails>;

/** PATCH /sandbox/{id} (sbx): what changes (limits, labels); limits apply to what runs now where the mechanism allows. */
export const SandboxUpdateRequest = named(
  "SandboxUpdateRequest",
  Type.Object(
    {
      limits: Type.Optional(SandboxLimitsRequest),
      labels: Type.Optional(
        Type.Record(Type.String({ maxLength: 317 }), Nullable(Type.String({ maxLength: 63 })), {
          description: "(sbx) Labels to set (added or replaced) and, with null, to remove; a label not named stays.",
        }),
      ),
      egress: Type.Optional(
        described(
          EgressPolicyRequest,
          "(sbx) Its egress policy, each list given replacing the one it had (network_mode allow-list only); new connections follow it at once.",
        ),
      ),
      idle_timeout_ms: Type.Optional(
        Nullable(Type.Integer({ minimum: 0 }), {
          description: "(sbx) Its idle timeout: 0 off, else at least 1000; null: the daemon's default.",
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type SandboxUpdateRequest = Static<typeof SandboxUpdateRequest>;

/** POST /sandbox/{id}/stop (sbx): what stopping the sandbox ended. */
export const SandboxStopped = named(
  "SandboxStopped",
  Type.Object({
    sandbox_id: Type.String(),
    name: Type.String(),
    was_running: Type.Boolean({ description: "Whether its environment was running (or starting)." }),
    ended: Type.Object({
      executions: Count({ description: "Executions cancelled." }),
      processes: Count({ description: "Supervised processes stopped (outcome cancelled, end_reason stopped)." }),
      jobs: Count({ description: "Jobs cancelled, queued ones included." }),
      other: Type.Array(Type.String(), {
        description: "Command names of the other processes killed with the environment (started in the background).",
      }),
    }),
    environment: SandboxEnvironment,
  }),
);
export type SandboxStopped = Static<typeof SandboxStopped>;

export const SandboxList = named("SandboxList", Type.Object({ sandboxes: Type.Array(Sandbox) }));
export type SandboxList = Static<typeof SandboxList>;

const FileType = StringEnum(["file", "directory"]);

/** PUT …/files: what was written (sbx). */
export const FileUpload = named(
  "FileUpload",
  Type.Object({
    path: Type.String({ description: 'Where it landed, symlinks inside the workspace followed ("/workspace/…").' }),
    type: FileType,
    bytes: Count({ description: "Bytes received (the raw file, or the tar stream)." }),
    sha256: Type.String({ pattern: "^[0-9a-f]{64}$", description: "sha256 of the bytes received." }),
    entries: Nullable(Count(), { description: "Entries unpacked from a tar stream; null for a raw file." }),
  }),
);
export type FileUpload = Static<typeof FileUpload>;

/** GET …/files?stat=true: what a path names (sbx). */
export const FileStat = named(
  "FileStat",
  Type.Object({
    path: Type.String(),
    type: StringEnum(["file", "directory", "symlink"], {
      description: "symlink: only with nofollow=true, for a symlink at the path itself.",
    }),
    size: Count({ description: "Bytes of a file; 0 for a directory or a symlink." }),
    mode: Type.String({ pattern: "^0[0-7]{3,4}$", description: 'Permission bits in octal, e.g. "0755".' }),
    target: Type.Optional(Type.String({ description: "A symlink's target, as it is (never followed)." })),
    allocated: Type.Optional(
      Count({
        description:
          "Bytes it occupies on disk, holes not counted (a sparse file's are fewer than its size): a file's always, a directory's files' with usage=true (sbx).",
      }),
    ),
  }),
);
export type FileStat = Static<typeof FileStat>;
