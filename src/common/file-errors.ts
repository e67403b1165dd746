// A failed file operation said in words a person reads ("no such file"), never as an
// errno name (ENOENT) or Node's message with its syscall and path repeated.

const WORDS: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "it is a directory",
  ENOTDIR: "a part of the path is not a directory",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "the name is too long",
  ENOSPC: "no space left on the device",
  EROFS: "the file system is read-only",
  EMFILE: "too many open files",
  ENFILE: "too many open files",
  EIO: "an input/output error",
  EEXIST: "it already exists",
  ENXIO: "no such device",
  ETXTBSY: "the file is busy",
};

/** Why a file could not be read or written, in words: "no such file", "permission denied". */
export function fileErrorWords(err: unknown): string {
  const e = err as NodeJS.ErrnoException | null | undefined;
  const words = e?.code === undefined ? undefined : WORDS[e.code];
  if (words !== undefined) return words;
  // Node's "ECODE: what happened, syscall 'path'": keep what happened.
  const message = e?.message ?? String(err);
  const said = /^[A-Z0-9]+: ([^,]+)/.exec(message)?.[1];
  return (said ?? message).trim();
}
