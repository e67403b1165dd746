// Sandboxes for people, and the --json document of one (its fields are the contract:
// a backend's extra fields are not passed through).

import type {
  EgressPolicy,
  LimitStatus,
  PublishedPort,
  Sandbox,
  SandboxDetails,
  SandboxLimits,
} from "../../../protocol/types.js";
import type { IO } from "../../io/io.js";
import { formatTime, printTable } from "../../render/table.js";
import { labelsText } from "../../../protocol/labels.js";

/** The sandboxes as a table; `labels`: with a LABELS column (k=v,… ; "-" for none). */
export async function printSandboxes(io: IO, sandboxes: Sandbox[], opts: { labels?: boolean } = {}): Promise<void> {
  const withLabels = opts.labels === true;
  await printTable(
    io,
    ["SANDBOX", "NAME", "STATUS", "ISOLATION", "NETWORK", "PORTS", "CREATED", ...(withLabels ? ["LABELS"] : [])],
    sandboxes.map((s) => [
      s.sandbox_id,
      s.name,
      s.status,
      s.isolation,
      networkColumn(s),
      portsColumn(s.published ?? []),
      formatTime(io, s.created_at),
      ...(withLabels ? [labelsText(s.labels ?? {}) || "-"] : []),
    ]),
  );
}

/** The PORTS column, as docker ps: `127.0.0.1:41234->3000` each, comma-separated; "-" for none. */
export function portsColumn(published: Array<Pick<PublishedPort, "host_ip" | "host_port" | "port">>): string {
  if (published.length === 0) return "-";
  return published.map((p) => `${hostPort(p)}->${p.port}`).join(", ");
}

/** `IP:PORT` as the host sees it (an IPv6 address in brackets). */
export function hostPort(p: { host_ip: string; host_port: number }): string {
  return p.host_ip.includes(":") ? `[${p.host_ip}]:${p.host_port}` : `${p.host_ip}:${p.host_port}`;
}

/** The NETWORK column: its mode (a backend without modes: yes or no). */
function networkColumn(s: Sandbox): string {
  return (s as Partial<Sandbox>).network_mode ?? (s.network ? "yes" : "no");
}

export interface SandboxDocument {
  sandbox_id: string;
  name: string;
  status: string;
  isolation: string;
  network: boolean;
  /** none, allow-list, user or host; a backend without modes: host when it has a network, else none. */
  network_mode: string;
  /** Its egress policy (network allow-list); null for every other mode. */
  egress: EgressPolicy | null;
  workspace: string;
  created_at: string;
  /** Its resource limits (null fields: no limit); null when the backend does not say. */
  limits: SandboxLimits | null;
  /** Its labels; {} for none (or a backend without labels). */
  labels: Record<string, string>;
  /** Its own idle timeout (0: off); null: the daemon's default (or a backend without idle stop). */
  idle_timeout_ms: number | null;
  /** The image its root was made from; null: the host's system directories. */
  image: { reference: string; digest: string; platform: string } | null;
  /** Its published ports, the host port as bound; [] when none (or the backend does not say). */
  published: PublishedPort[];
  /** The named volumes it mounts; [] when none (or the backend does not say). */
  volumes: Array<{ name: string; path: string; read_only?: boolean }>;
}

export function sandboxDocument(s: Sandbox): SandboxDocument {
  return {
    sandbox_id: s.sandbox_id,
    name: s.name,
    status: s.status,
    isolation: s.isolation,
    network: s.network,
    network_mode: (s as Partial<Sandbox>).network_mode ?? (s.network ? "host" : "none"),
    egress: s.egress ?? null,
    workspace: s.workspace,
    created_at: s.created_at,
    limits: s.limits ?? null,
    labels: s.labels ?? {},
    idle_timeout_ms: s.idle_timeout_ms ?? null,
    image: s.image ?? null,
    published: s.published ?? [],
    volumes: s.volumes ?? [],
  };
}

/** `sandbox show --json`: the sandbox, and where and how its commands run when the backend says. */
export interface SandboxDetailsDocument extends SandboxDocument {
  host_workspace: string | null;
  workspace_bytes: number | null;
  driver: SandboxDetails["driver"] | null;
  /** Each limit: whether and how it is enforced; null when the backend does not say. */
  limit_status: LimitStatus[] | null;
  /** Whether its network mode can be had here now, and why not; null when the backend does not say. */
  network_status: SandboxDetails["network_status"] | null;
  environment: SandboxDetails["environment"];
  /** Its idle stop: the timeout that applies, when, what keeps it awake; null when the backend does not say. */
  idle: SandboxDetails["idle"] | null;
}

export function sandboxDetailsDocument(s: Sandbox & Partial<SandboxDetails>): SandboxDetailsDocument {
  return {
    ...sandboxDocument(s),
    host_workspace: s.host_workspace ?? null,
    workspace_bytes: s.workspace_bytes ?? null,
    driver: s.driver
      ? {
          isolation: s.driver.isolation,
          version: s.driver.version,
          user: s.driver.user,
          host_uid: s.driver.host_uid ?? null,
          namespaces: s.driver.namespaces,
          host_paths_read_only: s.driver.host_paths_read_only,
          syscall_filter: s.driver.syscall_filter ?? null,
          available: s.driver.available,
          reason: s.driver.reason,
        }
      : null,
    limit_status: s.limit_status ?? null,
    network_status: s.network_status ?? null,
    environment: s.environment ?? null,
    idle: s.idle ?? null,
    published: s.published ?? [],
  };
}
