// Named volumes (sbx; docs/operations.md, "Named volumes"): a directory the backend owns
// that several sandboxes mount.

import { VOLUME_NAME_PATTERN } from "../volumes.js";
import { Count, named, Nullable, type Static, Timestamp, Type } from "./base.js";

export const VolumeMount = named(
  "VolumeMount",
  Type.Object(
    {
      name: Type.String({ pattern: VOLUME_NAME_PATTERN, description: "The volume." }),
      path: Type.String({
        description:
          "Where it is mounted inside the sandbox: absolute, not / nor under /workspace or the system's directories.",
      }),
      read_only: Type.Optional(Type.Boolean({ default: false, description: "A write there fails with EROFS." })),
    },
    { additionalProperties: false },
  ),
);
export type VolumeMount = Static<typeof VolumeMount>;

export const VolumeCreateRequest = named(
  "VolumeCreateRequest",
  Type.Object(
    {
      name: Type.String({ pattern: VOLUME_NAME_PATTERN }),
      size_bytes: Type.Optional(
        Nullable(
          Count({
            minimum: 16 * 1024 * 1024,
            description:
              "(sbx) Its size: a file system of its own (an ext4 image loop-mounted; root), so a write past it fails with ENOSPC; refused with 400 limit_unavailable where that cannot be had here. Null or absent: none.",
          }),
        ),
      ),
    },
    { additionalProperties: false },
  ),
);
export type VolumeCreateRequest = Static<typeof VolumeCreateRequest>;

export const Volume = named(
  "Volume",
  Type.Object({
    name: Type.String(),
    created_at: Timestamp(),
    used_by: Type.Array(Type.String(), { description: "Names of the sandboxes that mount it." }),
    ownership: Type.String({
      description:
        "How the sandboxes' uids share it here, in a few words (a group of its own and default ACLs as root).",
    }),
    gid: Nullable(
      Count({ description: "The group of its own the sandboxes that mount it share (root daemon); null: none." }),
    ),
    host_path: Nullable(Type.String({ description: "Its directory on the host (null over TCP)." })),
    size_bytes: Nullable(
      Count({ description: "Its size, a file system of its own; null: none (the disk it lives on)." }),
    ),
    free_bytes: Nullable(
      Count({ description: "Bytes left on its own file system (as df says); null without a size." }),
    ),
  }),
);
export type Volume = Static<typeof Volume>;

export const VolumeList = named("VolumeList", Type.Object({ volumes: Type.Array(Volume) }));
export type VolumeList = Static<typeof VolumeList>;
