// Sizes as people write them: "8MiB", "512k", "1g", "1048576" (units are powers of
// 1024, as `docker run --memory` and Kubernetes' Mi/Gi read them). Parsed the same way
// everywhere a size is read (daemon flags, sandbox limits).

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  ki: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mi: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gi: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  ti: 1024 ** 4,
  tib: 1024 ** 4,
};

/** A size like 8MiB, 512k, 1.5g or 1048576 in bytes (whole bytes); null when it is not one. */
export function parseSize(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) return null;
  const n = Math.floor(Number(m[1]) * unit);
  return n >= 1 && Number.isSafeInteger(n) ? n : null;
}

/** Bytes as a person reads them: 512 B, 64 KiB, 128 MiB, 1.5 GiB. */
export function formatSize(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(1).replace(/\.0$/, "");
  return `${shown} ${units[i]}`;
}
