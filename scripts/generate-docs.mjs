#!/usr/bin/env node
// Writes the man page and the shell completions from the built command tree (dist/),
// and docs/openapi.json from the route table and the wire schemas.
//   node scripts/generate-docs.mjs           write man/sbx.1, completions/* and docs/openapi.json
//   node scripts/generate-docs.mjs --check   exit 1, listing the files that differ
// Run through `npm run generate`, which builds first.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== "--check");
if (unknown.length > 0) {
  process.stderr.write(
    `generate-docs: unknown argument ${unknown[0]}\nusage: node scripts/generate-docs.mjs [--check]\n`,
  );
  process.exit(2);
}
const check = args.includes("--check");

let generated;
try {
  const { generatedFiles } = await import("../dist/cli/docs/generate.js");
  generated = generatedFiles();
} catch (err) {
  process.stderr.write(
    `generate-docs: could not load the built command tree (run npm run build): ${err?.stack ?? err}\n`,
  );
  process.exit(2);
}

const drifted = [];
for (const [rel, content] of Object.entries(generated)) {
  const file = path.join(root, rel);
  let current = null;
  try {
    current = fs.readFileSync(file, "utf8");
  } catch {
    current = null;
  }
  if (current === content) continue;
  drifted.push(rel);
  if (!check) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

if (check) {
  if (drifted.length > 0) {
    process.stderr.write(
      `generate-docs: out of date (run npm run generate):\n${drifted.map((f) => `  ${f}\n`).join("")}`,
    );
    process.exit(1);
  }
  process.stdout.write("generate-docs: man page, completions and docs/openapi.json are up to date\n");
} else {
  process.stdout.write(
    drifted.length > 0 ? `generate-docs: wrote ${drifted.join(", ")}\n` : "generate-docs: nothing changed\n",
  );
}
