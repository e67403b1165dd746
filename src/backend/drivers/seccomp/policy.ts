// What the sandbox's syscall filter refuses, and why (docs/drivers.md, "The syscall
// filter"). A deny list in the spirit of Flatpak's (common/flatpak-run.c) and of what
// Docker's default profile leaves out of its allow list for a container without
// capabilities: everything else is allowed. A command inside has no capability and no
// further user namespace already; the filter takes away kernel interfaces that need
// none (or that a kernel bug could open), so that a hostile command meets less kernel.
//
// Reviewed list: adding a name here needs its number for every architecture in
// syscalls.ts (a unit test checks both tables against libseccomp's).

/** errno values the filter answers with. */
export const EPERM = 1;
export const ENOSYS = 38;

/** Every namespace flag clone(2) takes (CLONE_NEWNS … CLONE_NEWNET): Docker's 0x7E020000. */
export const CLONE_NAMESPACE_FLAGS = 0x7e020000;
/** unshare(2) takes CLONE_NEWTIME too (0x80; in clone(2) those bits are the exit signal). */
export const UNSHARE_NAMESPACE_FLAGS = CLONE_NAMESPACE_FLAGS | 0x80;
/** ioctl requests that push input into a terminal (CVE-2017-5226, CVE-2023-28100). */
export const TIOCSTI = 0x5412;
export const TIOCLINUX = 0x541c;

/** When a rule applies: always, or on one argument (its low 32 bits: what the kernel reads for these). */
export type RuleCondition =
  /** Any of these bits set in the argument. */
  | { arg: number; anyBit: number }
  /** The argument is one of these values. */
  | { arg: number; oneOf: number[] };

export interface FilterRule {
  syscall: string;
  errno: typeof EPERM | typeof ENOSYS;
  /** Absent: the syscall is always refused. */
  when?: RuleCondition;
  /** Why, in a few words (docs/drivers.md has the comparison with Docker and Flatpak). */
  why: string;
}

export const FILTER_RULES: readonly FilterRule[] = [
  // The kernel keyring is not namespaced: keys of the host's users and services.
  { syscall: "keyctl", errno: EPERM, why: "kernel keyring (not namespaced)" },
  { syscall: "add_key", errno: EPERM, why: "kernel keyring (not namespaced)" },
  { syscall: "request_key", errno: EPERM, why: "kernel keyring (not namespaced)" },
  // Large kernel interfaces with a history of privilege escalations.
  { syscall: "bpf", errno: EPERM, why: "eBPF programs in the kernel" },
  { syscall: "perf_event_open", errno: EPERM, why: "performance counters; many kernel CVEs" },
  { syscall: "userfaultfd", errno: EPERM, why: "stalls kernel page faults (exploit helper)" },
  { syscall: "io_uring_setup", errno: EPERM, why: "io_uring: bypasses syscall filtering; many kernel CVEs" },
  { syscall: "io_uring_enter", errno: EPERM, why: "io_uring" },
  { syscall: "io_uring_register", errno: EPERM, why: "io_uring" },
  // The machine's kernel, modules, swap, power and accounting.
  { syscall: "kexec_load", errno: EPERM, why: "loads a new kernel" },
  { syscall: "kexec_file_load", errno: EPERM, why: "loads a new kernel" },
  { syscall: "init_module", errno: EPERM, why: "kernel modules" },
  { syscall: "finit_module", errno: EPERM, why: "kernel modules" },
  { syscall: "delete_module", errno: EPERM, why: "kernel modules" },
  { syscall: "swapon", errno: EPERM, why: "the host's swap" },
  { syscall: "swapoff", errno: EPERM, why: "the host's swap" },
  { syscall: "reboot", errno: EPERM, why: "the host's power" },
  { syscall: "acct", errno: EPERM, why: "process accounting" },
  { syscall: "syslog", errno: EPERM, why: "the kernel log (dmesg): host addresses and events" },
  { syscall: "quotactl", errno: EPERM, why: "disk quotas" },
  { syscall: "quotactl_fd", errno: EPERM, why: "disk quotas" },
  { syscall: "lookup_dcookie", errno: EPERM, why: "kernel profiling cookies" },
  { syscall: "uselib", errno: EPERM, why: "obsolete loader syscall" },
  { syscall: "modify_ldt", errno: EPERM, why: "x86 segment tables: a source of kernel info leaks" },
  // The file system view and namespaces: bwrap made them; commands keep them.
  { syscall: "mount", errno: EPERM, why: "mounts" },
  { syscall: "umount2", errno: EPERM, why: "mounts" },
  { syscall: "pivot_root", errno: EPERM, why: "mounts" },
  { syscall: "chroot", errno: EPERM, why: "mounts" },
  { syscall: "move_mount", errno: EPERM, why: "new mount API (CVE-2021-41133)" },
  { syscall: "open_tree", errno: EPERM, why: "new mount API (CVE-2021-41133)" },
  { syscall: "fsopen", errno: EPERM, why: "new mount API" },
  { syscall: "fsconfig", errno: EPERM, why: "new mount API" },
  { syscall: "fsmount", errno: EPERM, why: "new mount API" },
  { syscall: "fspick", errno: EPERM, why: "new mount API" },
  { syscall: "mount_setattr", errno: EPERM, why: "new mount API" },
  { syscall: "setns", errno: EPERM, why: "joining other namespaces" },
  {
    syscall: "unshare",
    errno: EPERM,
    when: { arg: 0, anyBit: UNSHARE_NAMESPACE_FLAGS },
    why: "new namespaces, user namespaces above all",
  },
  {
    syscall: "clone",
    errno: EPERM,
    when: { arg: 0, anyBit: CLONE_NAMESPACE_FLAGS },
    why: "new namespaces, user namespaces above all",
  },
  // clone3 takes its flags in memory, where a filter cannot look: ENOSYS makes libc
  // fall back to clone(2), whose flags are checked above (Docker and Flatpak do this).
  { syscall: "clone3", errno: ENOSYS, why: "flags out of the filter's sight; libc falls back to clone" },
  // The file handle escape ("shocker"): opens any inode of a mounted file system by number.
  { syscall: "open_by_handle_at", errno: EPERM, why: "opens files by handle, around the mount view" },
  // Typing into a terminal the command shares with someone else.
  {
    syscall: "ioctl",
    errno: EPERM,
    when: { arg: 1, oneOf: [TIOCSTI, TIOCLINUX] },
    why: "TIOCSTI/TIOCLINUX push input into a terminal",
  },
];
