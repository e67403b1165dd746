// Pulling images into the store (src/backend/images/): from an OCI layout and from a
// real registry (docker-registry on the loopback), anonymous and behind a bearer
// challenge; every blob checked, nothing half-kept.

import fs from "node:fs";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { pullImage } from "../../src/backend/images/pull.js";
import { parseImageRef } from "../../src/backend/images/reference.js";
import { ImagePullError } from "../../src/backend/images/source.js";
import { ImageStore } from "../../src/backend/images/store.js";
import { buildLayout, busyboxEntries, type Registry, startRegistry } from "../support/images.js";
import { describeNeeding } from "../support/requirements.js";
import { atEndOfFile, tempDir } from "../support/temp.js";

const files = [[{ name: "hello", data: "hello from the image\n" }]];

function blobsOf(store: ImageStore): string[] {
  const dir = path.join(store.root, "blobs", "sha256");
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

function tmpOf(store: ImageStore): string[] {
  const dir = path.join(store.root, "tmp");
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

describe("pulling from an OCI layout", () => {
  it("keeps each blob once, pinned by the manifest's digest, and an index resolved to this platform", async () => {
    const layout = await buildLayout(files, { tag: "1.0", index: true, config: { Env: ["A=1"], Cmd: ["sh"] } });
    const store = new ImageStore(tempDir("sbx-store-"));
    const image = await pullImage(store, parseImageRef(`oci:${layout.dir}:1.0`));
    expect(image.digest).toBe(layout.digest);
    expect(image.references).toEqual([`oci:${layout.dir}:1.0`]);
    expect(image.env).toEqual(["A=1"]);
    expect(image.cmd).toEqual(["sh"]);
    expect(blobsOf(store).sort()).toEqual(
      [layout.digest.slice(7), image.config.digest.slice(7), image.layers[0]!.digest.slice(7)].sort(),
    );
    // The same image again: nothing new, still one record.
    await pullImage(store, parseImageRef(`oci:${layout.dir}:1.0`));
    expect(store.listImages()).toHaveLength(1);
    expect(blobsOf(store)).toHaveLength(3);
  });

  it("refuses an image for another platform, naming what it offers", async () => {
    const other = process.arch === "x64" ? "s390x" : "amd64";
    const layout = await buildLayout(files, { tag: "x", index: true, architecture: other });
    const store = new ImageStore(tempDir("sbx-store-"));
    await expect(pullImage(store, parseImageRef(`oci:${layout.dir}:x`))).rejects.toThrow(`it offers linux/${other}`);
    expect(store.listImages()).toEqual([]);
  });

  it("refuses a corrupted layer and a truncated one, keeping nothing of them", async () => {
    for (const damage of ["corrupt", "truncate"] as const) {
      const layout = await buildLayout(files, { tag: "t" });
      const layer = path.join(
        layout.dir,
        "blobs",
        "sha256",
        (await import("../support/images.js")).sha256(layout.layers[0]!).slice(7),
      );
      const bytes = fs.readFileSync(layer);
      if (damage === "corrupt") bytes[bytes.length - 10]! ^= 0xff;
      fs.writeFileSync(layer, damage === "corrupt" ? bytes : bytes.subarray(0, bytes.length - 7));
      const store = new ImageStore(tempDir("sbx-store-"));
      const err = await pullImage(store, parseImageRef(`oci:${layout.dir}:t`)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ImagePullError);
      expect((err as Error).message).toMatch(/arrived as sha256:[0-9a-f]{64} \(\d+ bytes\): refused, nothing kept/);
      expect(store.listImages()).toEqual([]);
      // The config may be kept (it was whole); the layer is not, and no partial file stays.
      expect(blobsOf(store)).not.toContain(path.basename(layer));
      expect(tmpOf(store)).toEqual([]);
    }
  });

  it("refuses a tag the layout does not have, naming those it has", async () => {
    const layout = await buildLayout(files, { tag: "1.0" });
    const store = new ImageStore(tempDir("sbx-store-"));
    await expect(pullImage(store, parseImageRef(`oci:${layout.dir}:2.0`))).rejects.toThrow(
      "has no image tagged 2.0 (it has 1.0)",
    );
  });
});

/** A token service and a registry front that answers only with its token (the misbehaving remote is the front). */
async function bearerFront(registry: Registry, opts: { giveToken: boolean }) {
  const tokens: string[] = [];
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/token") {
      seen.push(`token ${url.searchParams.get("service")} ${url.searchParams.get("scope")}`);
      if (!opts.giveToken) {
        res.writeHead(403).end("no");
        return;
      }
      const token = `tok-${tokens.length}`;
      tokens.push(token);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ token }));
      return;
    }
    const auth = req.headers.authorization ?? "";
    seen.push(`${req.method} ${url.pathname} ${auth === "" ? "anonymous" : auth}`);
    if (!tokens.some((t) => auth === `Bearer ${t}`)) {
      const port = (server.address() as net.AddressInfo).port;
      res
        .writeHead(401, {
          "www-authenticate": `Bearer realm="http://127.0.0.1:${port}/token",service="test-registry",scope="repository:tools:pull"`,
        })
        .end("{}");
      return;
    }
    const upstream = http.request(
      {
        host: "127.0.0.1",
        port: Number(registry.host.split(":")[1]),
        path: req.url,
        method: req.method,
        headers: { accept: req.headers.accept ?? "*/*" },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  atEndOfFile(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { host: `127.0.0.1:${(server.address() as net.AddressInfo).port}`, seen };
}

describeNeeding(["registry", "skopeo", "busyboxStatic"], "pulling from a real registry on the loopback", () => {
  it("pulls by tag and by digest, over plain HTTP to the loopback", async () => {
    const registry = await startRegistry();
    const layout = await buildLayout([busyboxEntries()], { tag: "1", config: { Cmd: ["sh"] } });
    registry.push(layout.dir, "1", "tools:1");
    const store = new ImageStore(tempDir("sbx-store-"));
    const byTag = await pullImage(store, parseImageRef(`${registry.host}/tools:1`));
    expect(byTag.references).toEqual([`${registry.host}/tools:1`]);
    expect(byTag.layers).toHaveLength(1);
    const byDigest = await pullImage(store, parseImageRef(`${registry.host}/tools@${byTag.digest}`));
    expect(byDigest.digest).toBe(byTag.digest);
    expect(store.listImages()).toHaveLength(1);
    // A tag it does not have: the registry's own answer, nothing kept.
    const err = await pullImage(store, parseImageRef(`${registry.host}/tools:nope`)).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/GET manifests\/nope answered 404.*MANIFEST_UNKNOWN/);
    expect((err as ImagePullError).retryable).toBe(false);
  });

  it("answers a bearer challenge with a token from its realm, sent only to the registry", async () => {
    const registry = await startRegistry();
    const layout = await buildLayout(files, { tag: "2" });
    registry.push(layout.dir, "2", "tools:2");
    const front = await bearerFront(registry, { giveToken: true });
    const store = new ImageStore(tempDir("sbx-store-"));
    const image = await pullImage(store, parseImageRef(`${front.host}/tools:2`));
    expect(image.layers).toHaveLength(1);
    expect(front.seen[0]).toMatch(/^GET \/v2\/tools\/manifests\/2 anonymous$/);
    expect(front.seen).toContain("token test-registry repository:tools:pull");
    expect(
      front.seen.filter((s) => s.startsWith("GET /v2/tools/blobs/")).every((s) => s.endsWith("Bearer tok-0")),
    ).toBe(true);
  });

  it("refuses when the token service refuses, saying so and keeping nothing", async () => {
    const registry = await startRegistry();
    const front = await bearerFront(registry, { giveToken: false });
    const store = new ImageStore(tempDir("sbx-store-"));
    const err = await pullImage(store, parseImageRef(`${front.host}/tools:2`)).catch((e: unknown) => e);
    expect((err as Error).message).toContain(`the token service of ${front.host}/tools answered 403`);
    expect(store.listImages()).toEqual([]);
    expect(blobsOf(store)).toEqual([]);
  });

  it("says a registry that cannot be reached, as one to try again", async () => {
    const registry = await startRegistry();
    const host = registry.host;
    await registry.stop();
    const store = new ImageStore(tempDir("sbx-store-"));
    const err = await pullImage(store, parseImageRef(`${host}/tools:1`)).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/cannot be reached: ECONNREFUSED/);
    expect((err as ImagePullError).retryable).toBe(true);
  });
});
