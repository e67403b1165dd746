// Volumes for people, and the --json document of one (its fields are the contract).

import type { Volume } from "../../../protocol/types.js";
import type { IO } from "../../io/io.js";
import { formatTime, printTable } from "../../render/table.js";

export interface VolumeDocument {
  name: string;
  created_at: string;
  used_by: string[];
  ownership: string;
  gid: number | null;
  host_path: string | null;
}

export function volumeDocument(v: Volume): VolumeDocument {
  return {
    name: v.name,
    created_at: v.created_at,
    used_by: v.used_by,
    ownership: v.ownership,
    gid: v.gid,
    host_path: v.host_path ?? null,
  };
}

export async function printVolumes(io: IO, volumes: Volume[]): Promise<void> {
  await printTable(
    io,
    ["VOLUME", "USED BY", "CREATED"],
    volumes.map((v) => [v.name, v.used_by.length === 0 ? "-" : v.used_by.join(", "), formatTime(io, v.created_at)]),
  );
}
