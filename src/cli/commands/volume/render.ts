// Volumes for people, and the --json document of one (its fields are the contract).

import type { Volume } from "../../../protocol/types.js";
import { formatSize } from "../../../common/sizes.js";
import type { IO } from "../../io/io.js";
import { formatTime, printTable } from "../../render/table.js";

export interface VolumeDocument {
  name: string;
  created_at: string;
  used_by: string[];
  ownership: string;
  gid: number | null;
  host_path: string | null;
  size_bytes: number | null;
  free_bytes: number | null;
}

export function volumeDocument(v: Volume): VolumeDocument {
  return {
    name: v.name,
    created_at: v.created_at,
    used_by: v.used_by,
    ownership: v.ownership,
    gid: v.gid,
    host_path: v.host_path ?? null,
    size_bytes: v.size_bytes ?? null,
    free_bytes: v.free_bytes ?? null,
  };
}

export async function printVolumes(io: IO, volumes: Volume[]): Promise<void> {
  await printTable(
    io,
    ["VOLUME", "SIZE", "USED BY", "CREATED"],
    volumes.map((v) => [
      v.name,
      v.size_bytes == null ? "-" : `${formatSize(v.size_bytes)} (${formatSize(v.free_bytes ?? 0)} free)`,
      v.used_by.length === 0 ? "-" : v.used_by.join(", "),
      formatTime(io, v.created_at),
    ]),
  );
}
