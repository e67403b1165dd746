// What `--image REF` and `sbx image pull REF` name (docs/images.md, "Sources"):
//   oci:DIR[:TAG]                 an OCI image layout directory (its index.json), by tag
//                                 (org.opencontainers.image.ref.name) or its only image
//   oci-archive:FILE[:TAG]        the same layout as a tar file (skopeo copy … oci-archive:)
//   [REGISTRY/]REPO[:TAG][@DIGEST] a registry reference, as docker reads one: no registry
//                                 (no `.` or `:` in the first part, and not localhost) is
//                                 Docker Hub (docker.io, library/ for a single name);
//                                 no tag and no digest is :latest.

export type ImageRef =
  | { kind: "oci"; dir: string; tag: string | null; text: string }
  | { kind: "oci-archive"; file: string; tag: string | null; text: string }
  | {
      kind: "registry";
      /** host[:port] as written (docker.io for Docker Hub). */
      registry: string;
      repository: string;
      tag: string | null;
      digest: string | null;
      text: string;
    };

export class ImageRefError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImageRefError";
  }
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const REPO_PART = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;

export function isDigest(text: string): boolean {
  return DIGEST.test(text);
}

export function parseImageRef(text: string): ImageRef {
  if (text.startsWith("oci-archive:")) {
    const { place, tag } = placeAndTag(text, text.slice("oci-archive:".length), "oci-archive:FILE[:TAG]");
    return { kind: "oci-archive", file: place, tag, text };
  }
  if (text.startsWith("oci:")) {
    const { place, tag } = placeAndTag(text, text.slice(4), "oci:DIR[:TAG]");
    return { kind: "oci", dir: place, tag, text };
  }
  const m = /^(?:([a-z-]+-archive|docker|containers-storage|dir):)/.exec(text);
  if (m) {
    throw new ImageRefError(
      `${JSON.stringify(text)}: the ${m[1]}: transport is not supported; use oci:DIR[:TAG], oci-archive:FILE[:TAG] or a registry reference`,
    );
  }
  return registryRef(text);
}

/** PLACE[:TAG] of an oci: or oci-archive: reference. */
function placeAndTag(text: string, rest: string, form: string): { place: string; tag: string | null } {
  {
    // The tag follows the last `:` unless that `:` is part of the directory's path.
    const colon = rest.lastIndexOf(":");
    const tagged = colon > 0 && !rest.slice(colon + 1).includes("/");
    const place = tagged ? rest.slice(0, colon) : rest;
    const tag = tagged ? rest.slice(colon + 1) : null;
    if (place === "") throw new ImageRefError(`${JSON.stringify(text)}: needs a path (${form})`);
    if (tag !== null && !TAG.test(tag))
      throw new ImageRefError(`${JSON.stringify(text)}: invalid tag ${JSON.stringify(tag)}`);
    return { place, tag };
  }
}

function registryRef(text: string): ImageRef {
  let rest = text;
  let digest: string | null = null;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw new ImageRefError(`${JSON.stringify(text)}: a digest is sha256: and 64 hex digits`);
  }
  let tag: string | null = null;
  const lastSlash = rest.lastIndexOf("/");
  const colon = rest.lastIndexOf(":");
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw new ImageRefError(`${JSON.stringify(text)}: invalid tag ${JSON.stringify(tag)}`);
  }
  const parts = rest.split("/");
  let registry = "docker.io";
  const first = parts[0] ?? "";
  if (parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost")) {
    registry = parts.shift()!;
  }
  if (registry === "docker.io" && parts.length === 1) parts.unshift("library");
  if (parts.length === 0 || !parts.every((p) => REPO_PART.test(p))) {
    throw new ImageRefError(
      `${JSON.stringify(text)} is not an image reference: [REGISTRY/]REPOSITORY[:TAG][@sha256:DIGEST], or oci:DIR[:TAG]`,
    );
  }
  if (tag === null && digest === null) tag = "latest";
  return { kind: "registry", registry, repository: parts.join("/"), tag, digest, text };
}

/** The canonical text of a reference (what `sbx image list` shows): registry/repository:tag, oci:DIR:TAG. */
export function canonicalRef(ref: ImageRef): string {
  if (ref.kind === "oci") return `oci:${ref.dir}${ref.tag === null ? "" : `:${ref.tag}`}`;
  if (ref.kind === "oci-archive") return `oci-archive:${ref.file}${ref.tag === null ? "" : `:${ref.tag}`}`;
  return `${ref.registry}/${ref.repository}${ref.tag === null ? "" : `:${ref.tag}`}${ref.digest === null ? "" : `@${ref.digest}`}`;
}

/** The host part of host[:port] (brackets of an IPv6 address removed). */
export function hostOf(registry: string): string {
  if (registry.startsWith("[")) return registry.slice(1, registry.indexOf("]"));
  const colon = registry.lastIndexOf(":");
  return colon >= 0 ? registry.slice(0, colon) : registry;
}

/** Whether a host is this machine's loopback (where plain HTTP is allowed, as docker does). */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
