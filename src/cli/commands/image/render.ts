// Images for people, and the --json document of one.

import type { ImageRecord } from "../../../backend/images/index.js";
import { formatSize } from "../../../common/sizes.js";

export interface ImageDocument {
  digest: string;
  references: string[];
  platform: string;
  layers: number;
  size: number;
  pulled_at: string;
}

export function platformText(p: ImageRecord["platform"]): string {
  return `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ""}`;
}

export function imageDocument(i: ImageRecord): ImageDocument {
  return {
    digest: i.digest,
    references: i.references,
    platform: platformText(i.platform),
    layers: i.layers.length,
    size: i.size,
    pulled_at: i.pulledAt,
  };
}

export function sizeText(bytes: number): string {
  return formatSize(bytes);
}
