// Image references as docker reads them, and oci:DIR[:TAG] (src/backend/images/reference.ts).

import { describe, expect, it } from "vitest";
import { canonicalRef, isLoopbackHost, parseImageRef } from "../../src/backend/images/reference.js";

describe("image references", () => {
  it("reads a bare name as Docker Hub's library, :latest", () => {
    expect(parseImageRef("alpine")).toMatchObject({
      registry: "docker.io",
      repository: "library/alpine",
      tag: "latest",
    });
    expect(canonicalRef(parseImageRef("python:3.12-slim"))).toBe("docker.io/library/python:3.12-slim");
    expect(parseImageRef("org/tool:1")).toMatchObject({ registry: "docker.io", repository: "org/tool", tag: "1" });
  });

  it("reads a first part with a dot, a port or localhost as the registry", () => {
    expect(parseImageRef("ghcr.io/org/tool:1.4")).toMatchObject({ registry: "ghcr.io", repository: "org/tool" });
    expect(parseImageRef("127.0.0.1:5000/tools")).toMatchObject({ registry: "127.0.0.1:5000", tag: "latest" });
    expect(parseImageRef("localhost/x")).toMatchObject({ registry: "localhost", repository: "x" });
  });

  it("keeps a digest, with no tag implied", () => {
    const d = `sha256:${"a".repeat(64)}`;
    expect(parseImageRef(`registry.example.com/x@${d}`)).toMatchObject({ digest: d, tag: null });
    expect(() => parseImageRef("x@sha256:abc")).toThrow(/64 hex/);
  });

  it("reads oci:DIR[:TAG], a colon in the directory's path kept", () => {
    expect(parseImageRef("oci:/srv/img:2")).toMatchObject({ kind: "oci", dir: "/srv/img", tag: "2" });
    expect(parseImageRef("oci:/srv/img")).toMatchObject({ kind: "oci", dir: "/srv/img", tag: null });
    expect(parseImageRef("oci:/a:b/img")).toMatchObject({ kind: "oci", dir: "/a:b/img", tag: null });
  });

  it("refuses what is not a reference, and transports not read yet", () => {
    expect(() => parseImageRef("Not A Ref")).toThrow(/not an image reference/);
    expect(() => parseImageRef("UPPER/case")).toThrow(/not an image reference/);
    expect(() => parseImageRef("docker-archive:/tmp/x.tar")).toThrow(/docker-archive: transport is not supported/);
  });

  it("knows the loopback", () => {
    expect(["localhost", "127.0.0.1", "127.9.9.9", "::1"].every(isLoopbackHost)).toBe(true);
    expect(["128.0.0.1", "example.com", "localhost.evil"].some(isLoopbackHost)).toBe(false);
  });
});
