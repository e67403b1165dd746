// Wire schemas of a sandbox's egress evidence (docs/network.md, "Evidence"; GET
// /sandbox/{id}/egress), declared once (see base.ts).

import { Count, named, Nullable, type Static, StringEnum, Timestamp, Type } from "./base.js";
import { EgressPolicy, NetworkMode } from "./system.js";
import { EGRESS_DENIED_EVENTS_MAX, EGRESS_DENIED_KEPT } from "../types.js";

/** One connection a sandbox asked its egress proxy for (sbx; docs/network.md). */
export const EgressConnection = named(
  "EgressConnection",
  Type.Object({
    seq: Count({
      description: "The sandbox's change count when this connection was last decided or ended (`?since=`).",
    }),
    at: Timestamp(),
    host: Type.String({ description: "The name or address asked for (empty for one refused before it was read)." }),
    port: Type.Integer(),
    protocol: StringEnum(["http", "connect", "socks5"]),
    allowed: Type.Boolean({
      description: "false: refused by the policy (or the proxy's bound); the program was told so.",
    }),
    reason: Nullable(Type.String({ description: "Why it was refused, or why an allowed one failed; null otherwise." })),
    address: Nullable(Type.String({ description: "The address reached, for an allowed one." })),
    bytes_out: Count({ description: "Bytes sent to the destination (so far, while open)." }),
    bytes_in: Count({ description: "Bytes received from it." }),
    ended_at: Nullable(Timestamp(), { description: "null: still open." }),
  }),
);
export type EgressConnection = Static<typeof EgressConnection>;

/** GET /sandbox/{id}/egress (sbx): the sandbox's recent connections through its proxy. */
export const EgressReport = named(
  "EgressReport",
  Type.Object({
    sandbox_id: Type.String(),
    name: Type.String(),
    network_mode: NetworkMode,
    egress: Nullable(EgressPolicy),
    allowed_total: Count({ description: "Connections allowed (and ended) since the daemon started." }),
    denied_total: Count({ description: "Connections refused since the daemon started." }),
    seq: Count({
      description:
        "The sandbox's change count now (each connection decided or ended adds one): ask `?since=` it for what changes next.",
    }),
    connections: Type.Array(EgressConnection, {
      description:
        "The most recent (at most 1000), oldest first; kept in the daemon's memory, not across a restart. With `since`: those decided or ended after that change.",
    }),
  }),
);
export type EgressReport = Static<typeof EgressReport>;

/** One connection refused while an execution ran (docs/network.md, "Evidence"). */
export const EgressDenial = named(
  "EgressDenial",
  Type.Object({
    at: Timestamp(),
    host: Type.String({ description: "The name or address asked for (empty for one refused before it was read)." }),
    port: Type.Integer(),
    protocol: StringEnum(["http", "connect", "socks5"]),
    reason: Type.String({ description: "Why it was refused." }),
  }),
);
export type EgressDenial = Static<typeof EgressDenial>;

/** The connections refused through a sandbox's egress proxy while an execution ran there (sbx). */
export const EgressDenied = named(
  "EgressDenied",
  Type.Object({
    total: Count({ description: "Connections refused while it ran (every one, not only those listed)." }),
    first: Type.Array(EgressDenial, {
      maxItems: EGRESS_DENIED_KEPT,
      description: `The first ${EGRESS_DENIED_KEPT} of them, in order.`,
    }),
  }),
);
export type EgressDenied = Static<typeof EgressDenied>;

/** The data of an `egress_denied` event: one refusal while the execution ran, and the count so far. */
export const EgressDeniedEventData = named(
  "EgressDeniedEventData",
  Type.Object({
    at: Timestamp(),
    host: Type.String({ description: "The name or address asked for (empty for one refused before it was read)." }),
    port: Type.Integer(),
    protocol: StringEnum(["http", "connect", "socks5"]),
    reason: Type.String({ description: "Why it was refused." }),
    total: Count({
      description: `Refusals charged to the execution so far, this one included; past ${EGRESS_DENIED_EVENTS_MAX} they are counted (the exit event's egress_denied) without an event each.`,
    }),
  }),
);
export type EgressDeniedEventData = Static<typeof EgressDeniedEventData>;
