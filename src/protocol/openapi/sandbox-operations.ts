// The sandbox routes of the OpenAPI document (operations.ts holds the rest): what each
// takes and answers. See docs/protocol.md, "Sandboxes".

import type { RouteName } from "../routes.js";
import { StringEnum, Type } from "../schemas/base.js";
import {
  Sandbox,
  SandboxCreateRequest,
  SandboxDetails,
  SandboxList,
  SandboxStopped,
  SandboxUpdateRequest,
} from "../schemas/system.js";
import { SandboxStats } from "../schemas/stats.js";
import { EgressReport } from "../schemas/egress.js";
import { Volume, VolumeCreateRequest, VolumeList } from "../schemas/volumes.js";
import { filesGet, filesPut } from "./files-operations.js";
import { flag, int, json, type OperationSpec, replayed } from "./operation-spec.js";

type SandboxRoute = Extract<RouteName, `sandbox.${string}` | "sandboxes.list" | `volume.${string}` | "volumes.list">;

export const SANDBOX_OPERATIONS: Record<SandboxRoute, OperationSpec> = {
  "sandbox.create": {
    summary: "Create a sandbox",
    tag: "sandboxes",
    body: { required: false, description: "None: a sandbox with the defaults.", content: json(SandboxCreateRequest) },
    responses: { 201: { description: "The new sandbox.", content: json(Sandbox), headers: replayed } },
    errors: [
      "isolation_unavailable",
      "network_unavailable",
      "sandbox_exists",
      "limit_unavailable",
      "image_pull_failed",
      "volume_not_found",
    ],
  },
  "sandboxes.list": {
    summary: "List sandboxes",
    tag: "sandboxes",
    query: {
      selector: {
        schema: Type.String({ maxLength: 8192 }),
        description:
          "(sbx) Only sandboxes whose labels satisfy every requirement, comma-separated: k=v (or k==v), k!=v (holds where k is missing), k (has it), !k (has it not), as a Kubernetes labelSelector.",
      },
    },
    responses: {
      200: { description: "Every sandbox (that the selector matches).", content: json(SandboxList) },
    },
    errors: [],
  },
  "sandbox.get": {
    summary: "A sandbox, with its driver and workspace",
    tag: "sandboxes",
    query: {
      usage: flag("Also measure the workspace: its size on disk (workspace_bytes) and its files (workspace_files)."),
    },
    responses: { 200: { description: "The sandbox.", content: json(SandboxDetails) } },
    errors: [],
  },
  "sandbox.stats": {
    summary: "What a sandbox uses now (sbx)",
    description:
      'CPU time so far, memory now and at its peak, processes, /tmp, workspace and network bytes, each against its limit, from its cgroup (v1 or v2) and /proc (docs/operations.md, "Sandbox stats"). A figure that cannot be had here is null and `unavailable` says why. CPU % is the difference of two samples.',
    tag: "sandboxes",
    responses: { 200: { description: "One sample.", content: json(SandboxStats) } },
    errors: [],
  },
  "sandbox.egress": {
    summary: "A sandbox's connections through its egress proxy (sbx)",
    description:
      "Its recent connections (network allow-list), allowed and refused, with times, bytes and why; totals since the daemon started. `since`: only those decided or ended after that change (`seq`), to follow them. See docs/network.md.",
    tag: "sandboxes",
    query: {
      since: int(0, Number.MAX_SAFE_INTEGER, "Only connections decided or ended after this change count (`seq`).", 0),
    },
    responses: { 200: { description: "The sandbox's egress report.", content: json(EgressReport) } },
    errors: ["sandbox_not_found"],
  },
  "sandbox.update": {
    summary: "Change a sandbox's limits and labels (sbx)",
    description:
      "Labels: one named is set (added or replaced), null removes it, one not named stays. Limits: a missing limit stays, null lifts it. Stored for the sandbox's next runs and applied at once to what runs in it where the mechanism allows (cgroups: memory, pids, CPU); /tmp's size applies when the sandbox's environment next starts (a tmpfs is sized when mounted).",
    tag: "sandboxes",
    body: { required: true, content: json(SandboxUpdateRequest) },
    responses: {
      200: { description: "The sandbox, as GET answers it.", content: json(SandboxDetails), headers: replayed },
    },
    errors: ["limit_unavailable"],
  },
  "sandbox.delete": {
    summary: "Remove a sandbox and its workspace",
    tag: "sandboxes",
    query: { force: flag("Stop what still runs in it first (else 409 sandbox_busy).") },
    responses: {
      200: { description: 'The sandbox, with status "deleted".', content: json(Sandbox), headers: replayed },
    },
    errors: ["sandbox_busy"],
  },
  "sandbox.stop": {
    summary: "End a sandbox's environment and everything in it (sbx)",
    description:
      "Executions are cancelled, supervised processes stopped, jobs cancelled (queued ones too), then whatever else runs in the sandbox is killed with its environment. The workspace stays; the next command, or POST …/start, starts a new environment (an empty /tmp).",
    tag: "sandboxes",
    responses: { 200: { description: "What was ended.", content: json(SandboxStopped), headers: replayed } },
    errors: [],
  },
  "sandbox.start": {
    summary: "Start a sandbox's environment now (sbx)",
    description:
      "Answers once it is running; one already running is answered as it is. A sandbox without isolation (none) has none.",
    tag: "sandboxes",
    responses: { 200: { description: "The sandbox.", content: json(SandboxDetails), headers: replayed } },
    errors: ["isolation_unavailable", "sandbox_start_failed"],
  },
  "sandbox.pause": {
    summary: "Pause a sandbox: freeze every process in it (sbx)",
    description:
      'The cgroup freezer stops every process of the sandbox where it stands (no CPU; memory, /tmp, connections and terminals stay and wait). Answers once they all stopped, with environment.state paused. Meanwhile execute and process starts are refused (409 sandbox_paused); timeouts keep counting. See docs/operations.md, "Pause and resume".',
    tag: "sandboxes",
    responses: { 200: { description: "The sandbox, paused.", content: json(SandboxDetails), headers: replayed } },
    errors: ["pause_unavailable", "sandbox_not_running"],
  },
  "sandbox.resume": {
    summary: "Resume a paused sandbox: thaw its processes (sbx)",
    description: "Its processes go on where they stopped. One that is not paused is answered as it is.",
    tag: "sandboxes",
    responses: { 200: { description: "The sandbox.", content: json(SandboxDetails), headers: replayed } },
    errors: [],
  },
  "volume.create": {
    summary: "Create a named volume (sbx)",
    description:
      'A directory the backend owns that sandboxes mount (`volumes` at sandbox create). See docs/operations.md, "Named volumes".',
    tag: "sandboxes",
    body: { required: true, content: json(VolumeCreateRequest) },
    responses: { 201: { description: "The new volume.", content: json(Volume), headers: replayed } },
    errors: ["volume_exists", "limit_unavailable"],
  },
  "volumes.list": {
    summary: "List named volumes (sbx)",
    tag: "sandboxes",
    responses: { 200: { description: "Every volume, by name.", content: json(VolumeList) } },
    errors: [],
  },
  "volume.get": {
    summary: "A named volume, with the sandboxes that mount it (sbx)",
    tag: "sandboxes",
    responses: { 200: { description: "The volume.", content: json(Volume) } },
    errors: [],
  },
  "volume.delete": {
    summary: "Remove a named volume and its files (sbx)",
    tag: "sandboxes",
    responses: { 200: { description: "The volume as it was.", content: json(Volume), headers: replayed } },
    errors: ["volume_in_use"],
  },
  "volume.files.put": filesPut(""),
  "volume.files.get": filesGet(""),
  "sandbox.portforward": {
    summary: "Connect to a port inside a sandbox (WebSocket; sbx)",
    description:
      'One WebSocket (Connection: Upgrade, Upgrade: websocket) is one TCP connection to `port` on the sandbox\'s own loopback, joined before the switch: binary messages are its bytes both ways; the text message {"type":"eof"} says a side sends nothing more. Never starts the sandbox. Closed 1000 when the connection inside ends, 4001 when the sandbox stops. See docs/protocol.md, "Port forwarding".',
    tag: "sandboxes",
    headers: {
      Upgrade: { schema: StringEnum(["websocket"]), description: "Required: the route is a WebSocket." },
    },
    responses: { 101: { description: "Switching Protocols: the connection's WebSocket." } },
    errors: ["sandbox_not_running", "connection_refused", "upgrade_required", "invalid_request"],
  },
};
