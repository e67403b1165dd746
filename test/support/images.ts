// Images the tests build themselves (no network): OCI image layouts written from tar
// entries (busybox-static for a root that runs), and a real OCI registry (Debian's
// docker-registry, the CNCF distribution server) started on the loopback with its own
// config and storage, stopped by the pid it was started as.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { gzipSync } from "node:zlib";
import * as tarStream from "tar-stream";
import { BUSYBOX_STATIC } from "./requirements.js";
import { atEndOfFile, tempDir } from "./temp.js";
import { until } from "./wait.js";

export interface LayerEntry {
  name: string;
  type?: "file" | "directory" | "symlink" | "link" | "character-device" | "fifo";
  data?: string | Buffer;
  linkname?: string;
  mode?: number;
  devmajor?: number;
  devminor?: number;
}

/** A tar of the entries, in order (names as given: a hostile one stays hostile). */
export async function tarOf(entries: LayerEntry[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const c of pack) chunks.push(c as Buffer);
  })();
  for (const e of entries) {
    const type = e.type ?? "file";
    const data = e.data === undefined ? undefined : Buffer.from(e.data);
    await new Promise<void>((resolve, reject) => {
      const header: tarStream.Headers = {
        name: e.name,
        type,
        mode: e.mode ?? (type === "directory" ? 0o755 : 0o644),
        ...(e.linkname === undefined ? {} : { linkname: e.linkname }),
        ...(e.devmajor === undefined ? {} : { devmajor: e.devmajor, devminor: e.devminor ?? 0 }),
        size: type === "file" ? (data?.length ?? 0) : 0,
      };
      pack.entry(header, type === "file" ? (data ?? Buffer.alloc(0)) : undefined, (err) =>
        err ? reject(err) : resolve(),
      );
    });
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** A root that runs: /bin/busybox (static) and links to it for the programs the tests use. */
export function busyboxEntries(): LayerEntry[] {
  if (BUSYBOX_STATIC === null) throw new Error("no static busybox");
  const applets = ["sh", "ls", "cat", "echo", "id", "touch", "mkdir", "rm", "env", "pwd", "which", "readlink", "stat"];
  return [
    { name: "bin/", type: "directory" },
    { name: "bin/busybox", data: fs.readFileSync(BUSYBOX_STATIC), mode: 0o755 },
    ...applets.map((a) => ({ name: `bin/${a}`, type: "symlink" as const, linkname: "busybox" })),
    { name: "etc/", type: "directory" },
    { name: "etc/image-release", data: "sbx-test-image\n" },
    { name: "srv/", type: "directory" },
  ];
}

export interface LayoutImage {
  dir: string;
  /** The manifest's digest. */
  digest: string;
  layers: Buffer[];
}

export interface LayoutOptions {
  tag?: string;
  config?: Record<string, unknown>;
  /** The architecture the config and index say (default this machine's). */
  architecture?: string;
  /** Wrap the manifest in an index naming its platform. */
  index?: boolean;
  /** Leave layers uncompressed (tar) instead of gzip. */
  plainTar?: boolean;
}

const ARCH = process.arch === "x64" ? "amd64" : process.arch;

/** Writes an OCI image layout of the given layers (each a list of entries) into a new directory. */
export async function buildLayout(layers: LayerEntry[][], opts: LayoutOptions = {}): Promise<LayoutImage> {
  const dir = tempDir("sbx-oci-");
  fs.mkdirSync(path.join(dir, "blobs", "sha256"), { recursive: true });
  const put = (bytes: Buffer) => {
    const digest = sha256(bytes);
    fs.writeFileSync(path.join(dir, "blobs", "sha256", digest.slice(7)), bytes);
    return digest;
  };
  const tars = await Promise.all(layers.map(tarOf));
  const blobs = tars.map((t) => (opts.plainTar ? t : gzipSync(t)));
  const architecture = opts.architecture ?? ARCH;
  const config = Buffer.from(
    JSON.stringify({
      architecture,
      os: "linux",
      config: opts.config ?? {},
      rootfs: { type: "layers", diff_ids: tars.map(sha256) },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: put(config), size: config.length },
      layers: blobs.map((b) => ({
        mediaType: opts.plainTar
          ? "application/vnd.oci.image.layer.v1.tar"
          : "application/vnd.oci.image.layer.v1.tar+gzip",
        digest: put(b),
        size: b.length,
      })),
    }),
  );
  const digest = put(manifest);
  const annotations = { "org.opencontainers.image.ref.name": opts.tag ?? "latest" };
  const entry = {
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    digest,
    size: manifest.length,
    ...(opts.index ? { platform: { os: "linux", architecture } } : { annotations }),
  };
  let top = entry;
  if (opts.index) {
    const index = Buffer.from(
      JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: [entry] }),
    );
    top = {
      mediaType: "application/vnd.oci.image.index.v1+json",
      digest: put(index),
      size: index.length,
      annotations,
    } as typeof entry;
  }
  fs.writeFileSync(path.join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  fs.writeFileSync(path.join(dir, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [top] }));
  return { dir, digest, layers: blobs };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

export interface Registry {
  /** host:port on 127.0.0.1. */
  host: string;
  child: ChildProcess;
  /** Copies tag `tag` of an OCI layout to REPO:TAG in the registry (skopeo copy). */
  push(layoutDir: string, tag: string, repoTag: string): void;
  stop(): Promise<void>;
}

/** docker-registry on a free loopback port, with its own config and storage; stopped when the file ends. */
export async function startRegistry(): Promise<Registry> {
  const dir = tempDir("sbx-registry-");
  let lastError = "";
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const config = path.join(dir, "config.yml");
    fs.writeFileSync(
      config,
      [
        "version: 0.1",
        "log:",
        "  level: error",
        "storage:",
        "  filesystem:",
        `    rootdirectory: ${path.join(dir, "storage")}`,
        "  delete:",
        "    enabled: true",
        "http:",
        `  addr: 127.0.0.1:${port}`,
        "",
      ].join("\n"),
    );
    const child = spawn("/usr/bin/docker-registry", ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (c) => {
      stderr += String(c);
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    };
    const up = await until(
      async () => {
        if (child.exitCode !== null) return "exited";
        try {
          const res = await fetch(`http://127.0.0.1:${port}/v2/`);
          await res.body?.cancel();
          return res.status === 200 ? "up" : false;
        } catch {
          return false;
        }
      },
      20_000,
      "docker-registry to answer",
    );
    if (up === "up") {
      atEndOfFile(stop);
      const host = `127.0.0.1:${port}`;
      return {
        host,
        child,
        stop,
        push(layoutDir, tag, repoTag) {
          const r = spawnSync(
            "skopeo",
            ["copy", "--dest-tls-verify=false", `oci:${layoutDir}:${tag}`, `docker://${host}/${repoTag}`],
            { encoding: "utf8" },
          );
          if (r.status !== 0) throw new Error(`skopeo copy failed: ${r.stderr}`);
        },
      };
    }
    lastError = stderr;
    await stop();
  }
  throw new Error(`docker-registry did not start: ${lastError}`);
}
