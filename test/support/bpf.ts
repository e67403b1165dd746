// A small classic-BPF interpreter for seccomp programs (the instructions the filter
// builder emits, and those libseccomp emits), to test what a program decides for a
// syscall without loading it into a kernel.

import type { BpfInsn } from "../../src/backend/drivers/seccomp/bpf.js";

export interface SeccompData {
  nr: number;
  arch: number;
  /** Up to six 64-bit arguments. */
  args?: bigint[];
}

/** struct seccomp_data, little-endian. */
function dataBytes(d: SeccompData): Buffer {
  const buf = Buffer.alloc(64);
  buf.writeInt32LE(d.nr | 0, 0);
  buf.writeUInt32LE(d.arch >>> 0, 4);
  for (const [i, a] of (d.args ?? []).entries()) buf.writeBigUInt64LE(BigInt.asUintN(64, a), 16 + 8 * i);
  return buf;
}

/** Decodes struct sock_filter[] bytes. */
export function decode(bytes: Buffer): BpfInsn[] {
  const out: BpfInsn[] = [];
  for (let i = 0; i + 8 <= bytes.length; i += 8) {
    out.push({ code: bytes.readUInt16LE(i), jt: bytes[i + 2]!, jf: bytes[i + 3]!, k: bytes.readUInt32LE(i + 4) });
  }
  return out;
}

/** Runs the program on one syscall; returns its 32-bit verdict (SECCOMP_RET_*). */
export function run(program: readonly BpfInsn[], d: SeccompData): number {
  const data = dataBytes(d);
  let a = 0;
  let x = 0;
  const mem = new Array<number>(16).fill(0);
  for (let pc = 0, steps = 0; pc < program.length; pc++, steps++) {
    if (steps > 4096) throw new Error("runaway program");
    const { code, jt, jf, k } = program[pc]!;
    const cls = code & 0x07;
    switch (cls) {
      case 0x00: // LD
        if (code === 0x20) a = data.readUInt32LE(k);
        else if (code === 0x00) a = k >>> 0;
        else if (code === 0x60) a = mem[k]!;
        else throw new Error(`unsupported ld 0x${code.toString(16)}`);
        break;
      case 0x01: // LDX
        if (code === 0x01) x = k >>> 0;
        else if (code === 0x61) x = mem[k]!;
        else throw new Error(`unsupported ldx 0x${code.toString(16)}`);
        break;
      case 0x02: // ST
        mem[k] = a;
        break;
      case 0x03: // STX
        mem[k] = x;
        break;
      case 0x04: {
        // ALU
        const src = code & 0x08 ? x : k >>> 0;
        const op = code & 0xf0;
        if (op === 0x50) a = (a & src) >>> 0;
        else if (op === 0x40) a = (a | src) >>> 0;
        else if (op === 0x00) a = (a + src) >>> 0;
        else if (op === 0x10) a = (a - src) >>> 0;
        else throw new Error(`unsupported alu 0x${code.toString(16)}`);
        break;
      }
      case 0x05: {
        // JMP
        const src = code & 0x08 ? x : k >>> 0;
        const op = code & 0xf0;
        if (op === 0x00) {
          pc += k;
          break;
        }
        let cond: boolean;
        if (op === 0x10) cond = a === src;
        else if (op === 0x20) cond = a > src;
        else if (op === 0x30) cond = a >= src;
        else if (op === 0x40) cond = (a & src) !== 0;
        else throw new Error(`unsupported jmp 0x${code.toString(16)}`);
        pc += cond ? jt : jf;
        break;
      }
      case 0x06: // RET
        return code & 0x10 ? a : k >>> 0;
      case 0x07: // MISC
        if (code === 0x07) x = a;
        else if (code === 0x87) a = x;
        else throw new Error(`unsupported misc 0x${code.toString(16)}`);
        break;
    }
  }
  throw new Error("fell off the end of the program");
}
