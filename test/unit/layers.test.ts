// Layers point one way (docs/architecture.md): a static check over the import graph
// of src/. Every import (static, re-export, or lazy import()) between two layers must
// be one the page allows; nothing below the CLI imports from it, and the backend
// stands beside the client on protocol, files, platform and common.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli.js";
import { typescriptFiles } from "../support/source-files.js";

const SRC = path.join(REPO_ROOT, "src");

/** A layer is a top-level folder of src/; a file directly in src/ (version.ts) is usable by all. */
type Layer =
  | "cli"
  | "client"
  | "receipts"
  | "config"
  | "backend"
  | "sandbox-init"
  | "protocol"
  | "files"
  | "platform"
  | "common";

/** What each layer may import besides itself (and the root files). */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  cli: ["client", "receipts", "config", "backend", "sandbox-init", "protocol", "files", "platform", "common"],
  client: ["config", "protocol", "files", "platform", "common"],
  receipts: ["client", "protocol", "platform", "common"],
  config: ["protocol", "platform", "common"],
  backend: ["sandbox-init", "protocol", "files", "platform", "common"],
  /**
   * A program of its own inside each sandbox: Node's built-in modules only, and the
   * terminal seam (bundled into it: its imports are built-ins and runtime.ts).
   */
  "sandbox-init": ["platform"],
  protocol: ["common"],
  files: ["platform", "common"],
  platform: ["common"],
  common: [],
};

/**
 * Narrow crossings the page names: the classifier reads what the client observed
 * (types and one pure function, nothing that sends), and the CLI reaches the backend
 * only to run it (`sbx daemon run`) and to print the fault grammar.
 */
const ONLY_THROUGH: Partial<Record<`${Layer}->${Layer}`, readonly string[]>> = {
  "receipts->client": ["client/observed.ts"],
  "cli->backend": ["backend/daemon.ts", "backend/http/fault-spec-help.ts", "backend/images/index.ts"],
  "cli->sandbox-init": ["sandbox-init/init.ts"],
  "sandbox-init->platform": ["platform/pty.ts"],
};

/** The backend's HTTP edge, and the files that wire it to the domains. */
const HTTP = path.join("backend", "http");
const EDGE_WIRING = [path.join("backend", "backend.ts"), path.join("backend", "daemon.ts")];
/**
 * The backend's folders used only through their index.ts by anything outside them:
 * the domains it serves, what every run shares, and the store.
 */
const DOMAIN_FOLDERS = [
  "drivers",
  "egress",
  "executions",
  "images",
  "jobs",
  "processes",
  "retention",
  "runs",
  "sandboxes",
  "store",
  "volumes",
];

/** The folder of src/backend a file is in, or null (outside the backend, or at its top). */
function backendFolderOf(rel: string): string | null {
  const parts = rel.split(path.sep);
  return parts[0] === "backend" && parts.length > 2 ? parts[1]! : null;
}

interface Edge {
  from: string;
  to: string;
}

/** Every relative import of a file: `import … from`, `export … from`, `import("…")`. */
function importsOf(file: string): Edge[] {
  const text = fs.readFileSync(file, "utf8");
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gms),
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m) => m[1]!);
  return specs
    .filter((s) => s.startsWith("."))
    .map((s) => ({
      from: path.relative(SRC, file),
      to: path.relative(SRC, path.resolve(path.dirname(file), s)).replace(/\.js$/, ".ts"),
    }));
}

function layerOf(rel: string): Layer | null {
  const parts = rel.split(path.sep);
  return parts.length === 1 ? null : (parts[0] as Layer);
}

const EDGES = typescriptFiles(SRC).flatMap(importsOf);

/** The imports that cross from one layer into another. */
function crossings(): Array<Edge & { key: `${Layer}->${Layer}` }> {
  return EDGES.flatMap((e) => {
    const from = layerOf(e.from);
    const to = layerOf(e.to);
    if (from === null || to === null || from === to) return [];
    return [{ ...e, key: `${from}->${to}` as const }];
  });
}

/** Which of the backend's folders imports which (a file at its top, backend.ts, is in none). */
function folderGraph(edges: Edge[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    const from = backendFolderOf(e.from);
    const to = backendFolderOf(e.to);
    if (from === null || to === null || from === to) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from)!.add(to);
  }
  return graph;
}

/** Each circle of the graph once, as "a -> b -> a" from its first folder by name. */
function circlesOf(graph: Map<string, Set<string>>): string[] {
  const found = new Set<string>();
  const walk = (start: string, at: string, trail: string[]) => {
    for (const next of [...(graph.get(at) ?? [])].sort()) {
      if (next === start) found.add([...trail, start].join(" -> "));
      else if (next > start && !trail.includes(next)) walk(start, next, [...trail, next]);
    }
  };
  for (const start of [...graph.keys()].sort()) walk(start, start, [start]);
  return [...found].sort();
}

function describeEdges(edges: Edge[]): string[] {
  return edges.map((e) => `${e.from} imports ${e.to}`);
}

describe("the import graph of src/", () => {
  it("is read: the check sees the imports it is about", () => {
    // A parser that found nothing would pass every rule below.
    expect(EDGES.length).toBeGreaterThan(300);
    expect(EDGES).toContainEqual({ from: path.join("cli", "main.ts"), to: path.join("cli", "program.ts") });
    expect(
      EDGES.some((e) => e.from === path.join("cli", "main.ts") && e.to === path.join("cli", "error-report.ts")),
    ).toBe(true);
  });

  it("has every layer named in the rules, and every folder of src/ is a layer", () => {
    const folders = fs
      .readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(folders).toEqual(Object.keys(MAY_IMPORT).sort());
  });

  it("never points up into the CLI: nothing below src/cli imports from it", () => {
    const up = crossings().filter((e) => e.key.endsWith("->cli"));
    expect(describeEdges(up)).toEqual([]);
  });

  it("keeps the backend beside the client: it imports no cli, client, receipts or config", () => {
    const bad = crossings().filter((e) => /^backend->(cli|client|receipts|config)$/.test(e.key));
    expect(describeEdges(bad)).toEqual([]);
  });

  it("keeps HTTP at the backend's edge: only http/ and the wiring (backend.ts, daemon.ts) import it", () => {
    // Domain code throws Refusals and returns plain results; statuses and reply shapes are http/'s.
    const mayImportHttp = (from: string) =>
      from.startsWith(`${HTTP}${path.sep}`) || EDGE_WIRING.includes(from) || layerOf(from) !== "backend";
    const speaksHttp = EDGES.filter((e) => e.to.startsWith(`${HTTP}${path.sep}`) && !mayImportHttp(e.from));
    expect(describeEdges(speaksHttp)).toEqual([]);
  });

  it("uses a backend domain only through what its folder exports (its index.ts)", () => {
    const intoPrivateFiles = EDGES.filter((e) => {
      const to = backendFolderOf(e.to);
      if (to === null || !DOMAIN_FOLDERS.includes(to) || backendFolderOf(e.from) === to) return false;
      return path.basename(e.to) !== "index.ts";
    });
    expect(describeEdges(intoPrivateFiles)).toEqual([]);
  });

  it("sees the backend's folders it rules on (a rule over folders that moved would pass on nothing)", () => {
    const folders = fs
      .readdirSync(path.join(SRC, "backend"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(folders).toEqual([...DOMAIN_FOLDERS, "http"].sort());
    for (const folder of DOMAIN_FOLDERS)
      expect(fs.existsSync(path.join(SRC, "backend", folder, "index.ts"))).toBe(true);
    expect(EDGES).toContainEqual({
      from: path.join("backend", "processes", "supervisor.ts"),
      to: path.join("backend", "runs", "index.ts"),
    });
  });

  it("runs one way between the backend's folders: no folder reaches itself through others", () => {
    const graph = folderGraph(EDGES);
    // A check that saw no arrows would find no circle.
    expect(graph.get("processes")?.has("store")).toBe(true);
    expect(circlesOf(graph)).toEqual([]);
  });

  it("finds a circle between folders when there is one", () => {
    const edge = (from: string, to: string) => ({
      from: path.join("backend", from, "a.ts"),
      to: path.join("backend", to, "index.ts"),
    });
    const circle = folderGraph([edge("store", "executions"), edge("executions", "store"), edge("jobs", "store")]);
    expect(circlesOf(circle)).toEqual(["executions -> store -> executions"]);
    expect(circlesOf(folderGraph([edge("jobs", "store"), edge("executions", "store")]))).toEqual([]);
  });

  it("follows docs/architecture.md for every other crossing", () => {
    const bad = crossings().filter((e) => {
      const [from, to] = e.key.split("->") as [Layer, Layer];
      if (!MAY_IMPORT[from].includes(to)) return true;
      const only = ONLY_THROUGH[e.key];
      return only !== undefined && !only.includes(e.to.split(path.sep).join("/"));
    });
    expect(describeEdges(bad)).toEqual([]);
  });
});
