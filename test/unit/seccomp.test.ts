// The syscall filter's BPF program (src/backend/drivers/seccomp): what it decides for
// every syscall number and the arguments that matter, on x86_64 and aarch64, run in a
// small interpreter (test/support/bpf.ts). The cross-check with libseccomp's own program
// is test/unit/seccomp-libseccomp.test.ts.

import { beforeEach, describe, expect, it } from "vitest";
import {
  buildFilter,
  encodeFilter,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
} from "../../src/backend/drivers/seccomp/bpf.js";
import {
  CLONE_NAMESPACE_FLAGS,
  ENOSYS,
  EPERM,
  FILTER_RULES,
  TIOCLINUX,
  TIOCSTI,
  UNSHARE_NAMESPACE_FLAGS,
} from "../../src/backend/drivers/seccomp/policy.js";
import { ARCHES, hostArch, type SeccompArch } from "../../src/backend/drivers/seccomp/syscalls.js";
import { decode, run } from "../support/bpf.js";

const ARCH_NAMES: SeccompArch[] = ["x86_64", "aarch64"];
const ALLOW = SECCOMP_RET_ALLOW;
const errno = (e: number) => (SECCOMP_RET_ERRNO | e) >>> 0;
const KILL = SECCOMP_RET_KILL_PROCESS;
const CLONE_NEWUSER = 0x10000000;
const SIGCHLD = 17;
/** What glibc's fork() and pthread_create() pass to clone. */
const FORK_FLAGS = 0x01200000 | SIGCHLD;
const THREAD_FLAGS = 0x003d0f00;

/** Arguments worth trying on every syscall: none, each namespace bit, the terminal ioctls, ordinary values. */
const ARG_CASES: bigint[][] = [
  [],
  [BigInt(FORK_FLAGS)],
  [BigInt(THREAD_FLAGS)],
  [BigInt(CLONE_NEWUSER)],
  [BigInt(CLONE_NEWUSER | SIGCHLD)],
  [0x80n],
  [0x20000n],
  [0x40000000n],
  [0x1_0000_0000n], // a high bit only: the kernel reads clone's and unshare's low 32 bits
  [0n, BigInt(TIOCSTI)],
  [0n, BigInt(TIOCLINUX)],
  [0n, 0x1_0000_0000n + BigInt(TIOCSTI)], // high bits the kernel drops (ioctl's cmd is 32 bits)
  [0n, 0x5401n], // TCGETS
  [0n, 0x5413n], // TIOCGWINSZ
];

/** What the reviewed rules say, independently of the program. */
function expected(arch: SeccompArch, nr: number, args: bigint[]): number {
  const spec = ARCHES[arch];
  if (spec.x32Bit !== null && nr >>> 0 >= spec.x32Bit) return nr >>> 0 === 0xffffffff ? ALLOW : KILL;
  for (const rule of FILTER_RULES) {
    if (spec.numbers[rule.syscall] !== nr) continue;
    if (rule.when === undefined) return errno(rule.errno);
    const low = Number(BigInt.asUintN(32, args[rule.when.arg] ?? 0n));
    const hit = "anyBit" in rule.when ? (low & rule.when.anyBit) !== 0 : rule.when.oneOf.includes(low);
    if (hit) return errno(rule.errno);
  }
  return ALLOW;
}

const NUMBERS = [...Array.from({ length: 600 }, (_, i) => i), 0x40000000, 0x40000001, 0x4000010f, 0xffffffff];

describe.each(ARCH_NAMES)("the syscall filter for %s", (arch) => {
  const spec = ARCHES[arch];
  // Built in each test, never while the file is collected (docs/testing.md, "Mutation testing").
  let program: ReturnType<typeof buildFilter> = [];
  beforeEach(() => {
    program = buildFilter(arch);
  });

  it("decides every syscall number as the reviewed rules say", () => {
    for (const nr of NUMBERS) {
      for (const args of ARG_CASES) {
        expect(run(program, { nr, arch: spec.auditArch, args }), `nr ${nr} args ${args}`).toBe(
          expected(arch, nr, args),
        );
      }
    }
  });

  it("refuses what the issue names with EPERM, clone3 with ENOSYS, and lets ordinary syscalls through", () => {
    const d = (name: string, args: bigint[] = []) =>
      run(program, { nr: spec.numbers[name] ?? -1, arch: spec.auditArch, args });
    for (const name of [
      "keyctl",
      "add_key",
      "request_key",
      "bpf",
      "perf_event_open",
      "userfaultfd",
      "kexec_load",
      "init_module",
      "finit_module",
      "delete_module",
      "mount",
      "umount2",
      "pivot_root",
      "move_mount",
      "open_tree",
      "fsopen",
      "swapon",
      "swapoff",
      "reboot",
      "open_by_handle_at",
    ]) {
      expect(d(name), name).toBe(errno(EPERM));
    }
    expect(d("clone3")).toBe(errno(ENOSYS));
    expect(d("ioctl", [1n, BigInt(TIOCSTI)])).toBe(errno(EPERM));
    expect(d("ioctl", [1n, BigInt(TIOCLINUX)])).toBe(errno(EPERM));
    expect(d("ioctl", [1n, 0x5401n])).toBe(ALLOW);
    expect(d("unshare", [BigInt(CLONE_NEWUSER)])).toBe(errno(EPERM));
    expect(d("unshare", [0x400n])).toBe(ALLOW); // CLONE_FILES: no namespace
    expect(d("clone", [BigInt(CLONE_NEWUSER | SIGCHLD)])).toBe(errno(EPERM));
    expect(d("clone", [BigInt(FORK_FLAGS)])).toBe(ALLOW);
    expect(d("clone", [BigInt(THREAD_FLAGS)])).toBe(ALLOW);
    // read, write, openat, execve: allowed
    for (const nr of arch === "x86_64" ? [0, 1, 257, 59] : [63, 64, 56, 221]) {
      expect(run(program, { nr, arch: spec.auditArch })).toBe(ALLOW);
    }
  });

  it("kills a syscall of another architecture (i386, arm32, or the other 64-bit one)", () => {
    for (const other of [0x40000003 /* i386 */, 0x40000028 /* arm */, ...ARCH_NAMES.map((a) => ARCHES[a].auditArch)]) {
      if (other === spec.auditArch) continue;
      for (const nr of [0, 1, 11, 59, 120, 221]) expect(run(program, { nr, arch: other })).toBe(KILL);
    }
  });

  it("encodes as struct sock_filter[] (8 bytes each, little-endian) and stays small", () => {
    const bytes = encodeFilter(program);
    expect(bytes.length).toBe(program.length * 8);
    expect(decode(bytes)).toEqual(program);
    expect(program.length).toBeLessThan(100);
  });

  it("has no instruction that no path reaches", () => {
    const reached = new Set<number>();
    const todo = [0];
    while (todo.length > 0) {
      const at = todo.pop()!;
      if (reached.has(at) || at >= program.length) continue;
      reached.add(at);
      const insn = program[at]!;
      const cls = insn.code & 0x07;
      if (cls === 0x06) continue; // BPF_RET
      if (cls === 0x05)
        todo.push(at + 1 + insn.jt, at + 1 + insn.jf); // BPF_JMP (conditional)
      else todo.push(at + 1);
    }
    expect(reached.size).toBe(program.length);
  });

  it("masks the namespace flags Docker's profile masks (clone) plus CLONE_NEWTIME (unshare)", () => {
    expect(CLONE_NAMESPACE_FLAGS).toBe(0x7e020000);
    expect(UNSHARE_NAMESPACE_FLAGS).toBe(0x7e020080);
  });
});

describe("building a program", () => {
  // aarch64 (no x32 range): the architecture check jumps over every rule to the kill at
  // the end, k + 4 instructions for k unconditional rules; classic BPF jumps reach 255.
  const rules = (k: number) =>
    Array.from({ length: k }, () => ({ syscall: "keyctl", errno: EPERM, why: "test" }) as const);

  it("refuses rules whose jumps would not reach, rather than make a program the kernel reads otherwise", () => {
    expect(buildFilter("aarch64", rules(251)).length).toBe(251 + 7);
    expect(() => buildFilter("aarch64", rules(252))).toThrow(/out of range \(256\)/);
  });
});

describe("the architecture the filter is loaded for", () => {
  it("is the host's on x86_64 and aarch64, and none elsewhere", () => {
    expect(hostArch("x64")).toBe("x86_64");
    expect(hostArch("arm64")).toBe("aarch64");
    expect(hostArch("ia32")).toBeNull();
    expect(hostArch("riscv64")).toBeNull();
  });
});
