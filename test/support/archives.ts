// Hostile archives for the tests of sbx cp and the files routes: tar streams crafted
// entry by entry, and a host file whose mode, mtime and link count must not change.

import fs from "node:fs";
import path from "node:path";
import * as tarStream from "tar-stream";
import { tempDir } from "./temp.js";

/** A tar stream of exactly these entries (tar-stream directly, to craft hostile ones). */
export async function tarOf(entries: Array<tarStream.Headers & { data?: string | Buffer }>): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  // Read while writing: an entry completes only once the pack's buffer is read.
  const reading = (async () => {
    for await (const c of pack) chunks.push(c as Buffer);
  })();
  for (const { data, ...header } of entries) {
    await new Promise<void>((resolve, reject) =>
      pack.entry(header, data ?? "", (err) => (err ? reject(err) : resolve())),
    );
  }
  pack.finalize();
  await reading;
  return Buffer.concat(chunks);
}

/** A host file with a known mode and mtime, and how it stands now. */
export function victimFile(): { file: string; now: () => { mode: string; mtime: number; nlink: number } } {
  const file = path.join(tempDir("sbx-victim-"), "victim");
  fs.writeFileSync(file, "host file\n");
  fs.chmodSync(file, 0o640);
  fs.utimesSync(file, new Date("2001-02-03T04:05:06Z"), new Date("2001-02-03T04:05:06Z"));
  return {
    file,
    now: () => {
      const st = fs.statSync(file);
      return { mode: (st.mode & 0o7777).toString(8), mtime: st.mtimeMs, nlink: st.nlink };
    },
  };
}
