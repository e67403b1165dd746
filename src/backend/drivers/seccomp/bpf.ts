// The syscall filter as a classic BPF program (seccomp(2), SECCOMP_MODE_FILTER), built
// from the reviewed rules in policy.ts for one architecture. bwrap loads it (`--seccomp
// FD`) as the last step before it starts the command; the sandbox's init gets it too.
//
// The program, in order:
//   1. a syscall of another architecture (i386 on x86_64, arm32 on aarch64) kills the
//      process: its numbers mean other syscalls, and nothing here is built for it;
//   2. on x86_64, a number with the x32 bit kills the process too (same audit arch;
//      -1, a tracer's skipped syscall, passes as libseccomp lets it);
//   3. each refused syscall answers its errno (EPERM, or ENOSYS for clone3);
//   4. a syscall refused on an argument loads that argument's low 32 bits and answers
//      its errno when the condition holds;
//   5. everything else is allowed.
// Pure: the same rules and architecture give the same bytes (unit-tested with a small
// BPF interpreter, and against libseccomp where it is installed).

import { FILTER_RULES, type FilterRule } from "./policy.js";
import { ARCHES, type SeccompArch } from "./syscalls.js";

/** struct sock_filter: { u16 code; u8 jt; u8 jf; u32 k; } */
export interface BpfInsn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

export const BPF_LD_W_ABS = 0x20;
export const BPF_JMP_JEQ_K = 0x15;
export const BPF_JMP_JGE_K = 0x35;
export const BPF_JMP_JSET_K = 0x45;
export const BPF_RET_K = 0x06;

export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;

/** Offsets in struct seccomp_data: nr, arch, instruction_pointer, args[6] (little-endian). */
export const DATA_NR = 0;
export const DATA_ARCH = 4;
export function dataArgLow(arg: number): number {
  return 16 + 8 * arg;
}

/** A jump target: an instruction index once assembled. */
type Label = string;
type Item =
  | { op: "ld"; offset: number }
  | { op: "jump"; code: number; k: number; jt: Label | null; jf: Label | null }
  | { op: "ret"; k: number }
  | { op: "label"; name: Label };

/** The filter for `arch` from `rules` (the reviewed FILTER_RULES by default). */
export function buildFilter(arch: SeccompArch, rules: readonly FilterRule[] = FILTER_RULES): BpfInsn[] {
  const spec = ARCHES[arch];
  const errnoLabel = (errno: number) => `errno_${errno}`;
  const items: Item[] = [
    { op: "ld", offset: DATA_ARCH },
    { op: "jump", code: BPF_JMP_JEQ_K, k: spec.auditArch, jt: null, jf: "kill" },
    { op: "ld", offset: DATA_NR },
  ];
  if (spec.x32Bit !== null) items.push({ op: "jump", code: BPF_JMP_JGE_K, k: spec.x32Bit, jt: "x32", jf: null });
  const conditional: Array<{ rule: FilterRule; label: Label }> = [];
  const errnos = new Set<number>();
  for (const rule of rules) {
    const nr = spec.numbers[rule.syscall];
    if (nr === undefined) continue; // not a syscall on this architecture
    errnos.add(rule.errno);
    if (rule.when === undefined) {
      items.push({ op: "jump", code: BPF_JMP_JEQ_K, k: nr, jt: errnoLabel(rule.errno), jf: null });
    } else {
      const label = `cond_${conditional.length}`;
      conditional.push({ rule, label });
      items.push({ op: "jump", code: BPF_JMP_JEQ_K, k: nr, jt: label, jf: null });
    }
  }
  // Nothing matched; jumps only go forward, so the conditions below have their own "allow" after them.
  items.push({ op: "ret", k: SECCOMP_RET_ALLOW });
  for (const { rule, label } of conditional) {
    const when = rule.when!;
    const hit = errnoLabel(rule.errno);
    items.push({ op: "label", name: label }, { op: "ld", offset: dataArgLow(when.arg) });
    if ("anyBit" in when) {
      items.push({ op: "jump", code: BPF_JMP_JSET_K, k: when.anyBit, jt: hit, jf: "allow" });
    } else {
      when.oneOf.forEach((value, i) => {
        const last = i === when.oneOf.length - 1;
        items.push({ op: "jump", code: BPF_JMP_JEQ_K, k: value, jt: hit, jf: last ? "allow" : null });
      });
    }
  }
  if (spec.x32Bit !== null) {
    // Number -1 is not a syscall but how a tracer skips one (the kernel answers ENOSYS): let it be, as libseccomp does.
    items.push(
      { op: "label", name: "x32" },
      { op: "jump", code: BPF_JMP_JEQ_K, k: 0xffffffff, jt: "allow", jf: "kill" },
    );
  }
  items.push({ op: "label", name: "allow" }, { op: "ret", k: SECCOMP_RET_ALLOW });
  for (const errno of [...errnos].sort((a, b) => a - b)) {
    items.push({ op: "label", name: errnoLabel(errno) }, { op: "ret", k: SECCOMP_RET_ERRNO | errno });
  }
  items.push({ op: "label", name: "kill" }, { op: "ret", k: SECCOMP_RET_KILL_PROCESS });
  return assemble(items);
}

/** Resolves labels to forward jump offsets (classic BPF jumps only forward, at most 255). */
function assemble(items: Item[]): BpfInsn[] {
  const at = new Map<Label, number>();
  let n = 0;
  for (const item of items) {
    if (item.op === "label") at.set(item.name, n);
    else n++;
  }
  const out: BpfInsn[] = [];
  const offset = (label: Label | null, from: number): number => {
    if (label === null) return 0;
    const target = at.get(label);
    if (target === undefined) throw new Error(`seccomp filter: no label ${label}`);
    const jump = target - from - 1;
    if (jump < 0 || jump > 255) throw new Error(`seccomp filter: jump to ${label} out of range (${jump})`);
    return jump;
  };
  for (const item of items) {
    if (item.op === "label") continue;
    const index = out.length;
    if (item.op === "ld") out.push({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: item.offset });
    else if (item.op === "ret") out.push({ code: BPF_RET_K, jt: 0, jf: 0, k: item.k >>> 0 });
    else out.push({ code: item.code, jt: offset(item.jt, index), jf: offset(item.jf, index), k: item.k >>> 0 });
  }
  return out;
}

/** The program as the kernel reads it (struct sock_filter[], little-endian: x86_64 and aarch64 both are). */
export function encodeFilter(program: readonly BpfInsn[]): Buffer {
  const buf = Buffer.alloc(program.length * 8);
  program.forEach((insn, i) => {
    buf.writeUInt16LE(insn.code, i * 8);
    buf.writeUInt8(insn.jt, i * 8 + 2);
    buf.writeUInt8(insn.jf, i * 8 + 3);
    buf.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return buf;
}
