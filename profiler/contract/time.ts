// Time in StreamScope: every stored or computed time is integer nanoseconds
// relative to the recording origin (meta 'origin_ns'), as a plain JS number
// (exact: a recording would have to last 104 days to pass 2^53 ns).
// Durations are nanoseconds too. The brand keeps "ns" from mixing with other
// numbers at API boundaries without costing anything at run time.
export type Ns = number & { readonly __unit?: 'ns' };

export const NS_PER_US = 1e3;
export const NS_PER_MS = 1e6;
export const NS_PER_S = 1e9;

/** Human-readable duration: 850 ns, 12.4 µs, 3.21 ms, 1.50 s. */
export function formatDuration(ns: Ns): string {
  const a = Math.abs(ns);
  if (a < NS_PER_US) return `${Math.round(ns)} ns`;
  if (a < NS_PER_MS) return `${(ns / NS_PER_US).toPrecision(3)} µs`;
  if (a < NS_PER_S) return `${(ns / NS_PER_MS).toPrecision(3)} ms`;
  return `${(ns / NS_PER_S).toFixed(2)} s`;
}

/** Bytes per nanosecond equals GB/s (1e9 bytes per second). */
export function gigabytesPerSecond(bytes: number, durationNs: Ns): number | null {
  return durationNs > 0 ? bytes / durationNs : null;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}
