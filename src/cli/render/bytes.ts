// Sizes for people: 512 B, 1.5 KiB, 3.0 GiB.

const UNITS = ["KiB", "MiB", "GiB", "TiB"];

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${UNITS[i]}`;
}
