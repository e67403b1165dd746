// A sandbox that can no longer be set up, for real: the backend's bwrap reads /etc from
// a directory of the test's own (the driver's etcDir option), which the test removes
// once the daemon has probed it. Every bwrap run then fails while bwrap sets the
// sandbox up ("Can't find source path …/etc") and never starts its command.

import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./temp.js";

export interface BrokenEtc {
  /** The directory the backend's bwrap reads /etc from (give it as drivers.bwrap.etcDir). */
  etcDir: string;
  /** Removes it: from now on no sandbox can be set up. */
  breakIt(): void;
}

export function brokenEtc(): BrokenEtc {
  const dir = tempDir("sbx-etc-");
  // bwrap reads it as a sandbox's own uid when the tests run as root: the way to it must be
  // open to that uid (the temporary directories of the run are private otherwise).
  for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
    const mode = fs.statSync(d).mode;
    if ((mode & 0o001) !== 0) break; // others may pass already (/tmp): nothing above needs it
    fs.chmodSync(d, (mode & 0o7777) | 0o711);
  }
  const etcDir = path.join(dir, "etc");
  fs.mkdirSync(etcDir);
  for (const name of ["passwd", "group", "hostname"]) {
    if (fs.existsSync(`/etc/${name}`)) fs.copyFileSync(`/etc/${name}`, path.join(etcDir, name));
  }
  return { etcDir, breakIt: () => fs.rmSync(etcDir, { recursive: true, force: true }) };
}
