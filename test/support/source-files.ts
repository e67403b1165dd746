// The TypeScript files of a folder of the repository, for tests that read the code
// itself (the import graph, exit codes).

import fs from "node:fs";
import path from "node:path";

/** Every .ts file below `dir`, as absolute paths. */
export function typescriptFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return typescriptFiles(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}
