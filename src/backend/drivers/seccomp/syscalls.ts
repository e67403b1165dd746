// The architectures the syscall filter is built for, and the numbers of the syscalls
// it names on each (from the kernel's asm/unistd_64.h for x86_64 and
// asm-generic/unistd.h for aarch64). A unit test checks every number against
// libseccomp's own tables where libseccomp is installed.

export type SeccompArch = "x86_64" | "aarch64";

export interface ArchSpec {
  /** AUDIT_ARCH_* as seccomp_data.arch reports it. */
  auditArch: number;
  /**
   * x86_64 only: syscall numbers with this bit set are the x32 ABI, which shares
   * AUDIT_ARCH_X86_64; the filter refuses them all (nothing here is built for x32).
   */
  x32Bit: number | null;
  /** Syscall numbers by name; a name missing here does not exist on the architecture. */
  numbers: Readonly<Record<string, number>>;
}

/** Syscalls added since Linux 5.1 have one number on every architecture. */
const SINCE_5_1 = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  clone3: 435,
  mount_setattr: 442,
  quotactl_fd: 443,
};

export const ARCHES: Readonly<Record<SeccompArch, ArchSpec>> = {
  x86_64: {
    auditArch: 0xc000003e,
    x32Bit: 0x40000000,
    numbers: {
      ioctl: 16,
      clone: 56,
      syslog: 103,
      uselib: 134,
      modify_ldt: 154,
      pivot_root: 155,
      chroot: 161,
      acct: 163,
      mount: 165,
      umount2: 166,
      swapon: 167,
      swapoff: 168,
      reboot: 169,
      init_module: 175,
      delete_module: 176,
      quotactl: 179,
      lookup_dcookie: 212,
      kexec_load: 246,
      add_key: 248,
      request_key: 249,
      keyctl: 250,
      unshare: 272,
      perf_event_open: 298,
      open_by_handle_at: 304,
      setns: 308,
      finit_module: 313,
      kexec_file_load: 320,
      bpf: 321,
      userfaultfd: 323,
      ...SINCE_5_1,
    },
  },
  aarch64: {
    auditArch: 0xc00000b7,
    x32Bit: null,
    numbers: {
      lookup_dcookie: 18,
      ioctl: 29,
      umount2: 39,
      mount: 40,
      pivot_root: 41,
      chroot: 51,
      quotactl: 60,
      acct: 89,
      unshare: 97,
      kexec_load: 104,
      init_module: 105,
      delete_module: 106,
      syslog: 116,
      reboot: 142,
      add_key: 217,
      request_key: 218,
      keyctl: 219,
      clone: 220,
      swapon: 224,
      swapoff: 225,
      perf_event_open: 241,
      open_by_handle_at: 265,
      setns: 268,
      finit_module: 273,
      bpf: 280,
      userfaultfd: 282,
      kexec_file_load: 294,
      ...SINCE_5_1,
    },
  },
};

/** The architecture this process runs on, or null when the filter is not built for it. */
export function hostArch(arch: string = process.arch): SeccompArch | null {
  if (arch === "x64") return "x86_64";
  if (arch === "arm64") return "aarch64";
  return null;
}
