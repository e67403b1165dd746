// Manifests and indexes as the OCI image spec and Docker's v2 schema 2 write them, and
// the choice of one platform's manifest from an index (docs/images.md, "Sources").

export const MEDIA = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;

/** What a manifest request accepts (every kind sbx reads). */
export const MANIFEST_ACCEPT = [MEDIA.ociIndex, MEDIA.ociManifest, MEDIA.dockerList, MEDIA.dockerManifest].join(", ");

/** Layer media types sbx unpacks: tar, gzip-compressed tar. */
const LAYER_TYPES = new Set([
  "application/vnd.oci.image.layer.v1.tar",
  "application/vnd.oci.image.layer.v1.tar+gzip",
  "application/vnd.docker.image.rootfs.diff.tar.gzip",
]);

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { os: string; architecture: string; variant?: string };
  annotations?: Record<string, string>;
}

export interface Manifest {
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
}

export class ImageFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImageFormatError";
  }
}

/** This machine's platform in OCI's words. */
export function hostPlatform(): { os: string; architecture: string; variant?: string } {
  const arch: Record<string, string> = {
    x64: "amd64",
    arm64: "arm64",
    arm: "arm",
    ia32: "386",
    ppc64: "ppc64le",
    s390x: "s390x",
    riscv64: "riscv64",
  };
  return {
    os: "linux",
    architecture: arch[process.arch] ?? process.arch,
    ...(process.arch === "arm64" ? { variant: "v8" } : {}),
  };
}

/** Whether a document is an index (a list of manifests per platform) rather than one manifest. */
export function isIndex(doc: { mediaType?: string; manifests?: unknown }, contentType: string | null): boolean {
  const type = doc.mediaType ?? contentType ?? "";
  return type === MEDIA.ociIndex || type === MEDIA.dockerList || (type === "" && Array.isArray(doc.manifests));
}

export function parseJson(bytes: Uint8Array, what: string): Record<string, unknown> {
  try {
    const doc = JSON.parse(Buffer.from(bytes).toString("utf8"));
    if (doc !== null && typeof doc === "object" && !Array.isArray(doc)) return doc as Record<string, unknown>;
  } catch {
    // said below
  }
  throw new ImageFormatError(`${what} is not a JSON object`);
}

function descriptor(d: unknown, what: string): Descriptor {
  const o = d as Partial<Descriptor> | null;
  if (!o || typeof o.digest !== "string" || !/^sha256:[0-9a-f]{64}$/.test(o.digest) || typeof o.size !== "number") {
    throw new ImageFormatError(`${what}: a descriptor without a sha256 digest and a size`);
  }
  return {
    mediaType: String(o.mediaType ?? ""),
    digest: o.digest,
    size: o.size,
    ...(o.platform ? { platform: o.platform } : {}),
    ...(o.annotations ? { annotations: o.annotations } : {}),
  };
}

/** The index's manifests. */
export function indexEntries(doc: Record<string, unknown>): Descriptor[] {
  if (!Array.isArray(doc.manifests)) throw new ImageFormatError("an index without manifests");
  return doc.manifests.map((m, i) => descriptor(m, `manifest ${i} of the index`));
}

/** The entry of an index for this machine's platform; refused naming what it offers. */
export function choosePlatform(entries: Descriptor[], want = hostPlatform()): Descriptor {
  const images = entries.filter((e) => e.platform !== undefined);
  const match = images.filter((e) => e.platform!.os === want.os && e.platform!.architecture === want.architecture);
  const exact = match.find(
    (e) => want.variant === undefined || e.platform!.variant === undefined || e.platform!.variant === want.variant,
  );
  if (exact) return exact;
  if (images.length === 0 && entries.length === 1) return entries[0]!;
  const offered = images.map(
    (e) => `${e.platform!.os}/${e.platform!.architecture}${e.platform!.variant ? `/${e.platform!.variant}` : ""}`,
  );
  throw new ImageFormatError(
    `the image has no ${want.os}/${want.architecture} variant; it offers ${offered.length === 0 ? "no platform" : offered.join(", ")}`,
  );
}

export function parseManifest(doc: Record<string, unknown>, contentType: string | null): Manifest {
  const mediaType = String(doc.mediaType ?? contentType ?? MEDIA.ociManifest);
  if (doc.schemaVersion !== 2) throw new ImageFormatError("a manifest that is not schema version 2");
  if (!Array.isArray(doc.layers)) throw new ImageFormatError("a manifest without layers");
  const layers = doc.layers.map((l, i) => descriptor(l, `layer ${i}`));
  for (const l of layers) {
    if (!LAYER_TYPES.has(l.mediaType)) {
      throw new ImageFormatError(
        `layer ${l.digest} is ${l.mediaType || "of no media type"}: sbx unpacks tar and tar+gzip layers only`,
      );
    }
  }
  return { mediaType, config: descriptor(doc.config, "the config"), layers };
}

export interface ImageConfig {
  platform: { os: string; architecture: string; variant?: string };
  env: string[];
  cmd: string[];
  entrypoint: string[];
  workingDir: string;
  user: string;
}

export function parseConfig(doc: Record<string, unknown>): ImageConfig {
  const c = (doc.config ?? {}) as Record<string, unknown>;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : []);
  return {
    platform: {
      os: String(doc.os ?? ""),
      architecture: String(doc.architecture ?? ""),
      ...(typeof doc.variant === "string" ? { variant: doc.variant } : {}),
    },
    env: strings(c.Env),
    cmd: strings(c.Cmd),
    entrypoint: strings(c.Entrypoint),
    workingDir: typeof c.WorkingDir === "string" ? c.WorkingDir : "",
    user: typeof c.User === "string" ? c.User : "",
  };
}
