// The syscall filter (src/backend/drivers/seccomp) against libseccomp: its syscall
// tables check ours, and the program it builds from the same rules decides every case
// as ours does (run in test/support/bpf.ts's interpreter), where libseccomp's headers
// and a C compiler are here.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { buildFilter } from "../../src/backend/drivers/seccomp/bpf.js";
import { FILTER_RULES } from "../../src/backend/drivers/seccomp/policy.js";
import { ARCHES, type SeccompArch } from "../../src/backend/drivers/seccomp/syscalls.js";
import { decode, run } from "../support/bpf.js";
import { describeNeeding, meets } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";

const ARCH_NAMES: SeccompArch[] = ["x86_64", "aarch64"];
const NUMBERS = [...Array.from({ length: 600 }, (_, i) => i), 0x40000000, 0x40000001, 0x4000010f, 0xffffffff];
const CLONE_NEWUSER = 0x10000000;
const ARG_CASES: bigint[][] = [
  [],
  [BigInt(0x01200000 | 17)],
  [0x003d0f00n],
  [BigInt(CLONE_NEWUSER)],
  [0x80n],
  [0x20000n],
  [0x1_0000_0000n],
  [0n, 0x5412n],
  [0n, 0x541cn],
  [0n, 0x1_0000_5412n],
  [0n, 0x5401n],
];

const SOURCE = path.resolve(__dirname, "../fixtures/seccomp/libseccomp-filter.c");
/** The helper built from libseccomp-filter.c (where libseccomp's headers and cc are here). */
const helper = (() => {
  if (!meets("libseccomp")) return "";
  const bin = path.join(tempDir("sbx-seccomp-"), "libseccomp-filter");
  const cc = spawnSync("cc", ["-O0", "-o", bin, SOURCE, "-lseccomp"], { encoding: "utf8" });
  if (cc.status !== 0) throw new Error(`cannot build the libseccomp helper: ${cc.stderr || cc.error}`);
  return bin;
})();

function rulesText(): string {
  return FILTER_RULES.map((r) => {
    if (r.when === undefined) return `${r.syscall} ${r.errno}`;
    if ("anyBit" in r.when) return `${r.syscall} ${r.errno} anybit ${r.when.arg} ${r.when.anyBit}`;
    return `${r.syscall} ${r.errno} oneof ${r.when.arg} ${r.when.oneOf.join(" ")}`;
  }).join("\n");
}

describeNeeding("libseccomp", "against libseccomp", () => {
  it.each(ARCH_NAMES)("%s: every syscall number in syscalls.ts is libseccomp's", (arch) => {
    const names = FILTER_RULES.map((r) => r.syscall);
    const out = spawnSync(helper, [arch, "numbers", ...names], { encoding: "utf8" });
    expect(out.status, out.stderr).toBe(0);
    const theirs = Object.fromEntries(
      out.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(" "))
        .map(([n, v]) => [n, Number(v)]),
    );
    const ours = Object.fromEntries(names.map((n) => [n, ARCHES[arch].numbers[n] ?? -1]));
    expect(ours).toEqual(theirs);
  });

  it.each(ARCH_NAMES)("%s: libseccomp's program from the same rules decides every case the same", (arch) => {
    const out = spawnSync(helper, [arch, "filter"], { input: rulesText() });
    expect(out.status, String(out.stderr)).toBe(0);
    const theirs = decode(out.stdout);
    const ours = buildFilter(arch);
    const spec = ARCHES[arch];
    for (const auditArch of [spec.auditArch, 0x40000003, 0x40000028]) {
      for (const nr of NUMBERS) {
        for (const args of ARG_CASES) {
          const d = { nr, arch: auditArch, args };
          expect(run(ours, d), `arch 0x${auditArch.toString(16)} nr ${nr} args ${args}`).toBe(run(theirs, d));
        }
      }
    }
  });
});
