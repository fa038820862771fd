// Time in StreamScope: every stored or computed time is integer nanoseconds
// relative to the recording origin (meta 'origin_ns'), as a plain JS number
// (exact: a recording would have to last 104 days to pass 2^53 ns).
// Durations are nanoseconds too. The brand keeps "ns" from mixing with other
// numbers without costing anything at run time.
//
// Two strengths of it. `Ns`, the brand optional, is what the analyses compute
// with and answer in: any number passes as one (they have not been branded
// yet). `BrandedNs`, the brand required, is what the API takes: a page
// calls it through `NsArguments<StreamScopeApi>` (renderer/src/api/client.ts),
// whose every argument field named `…Ns` is a BrandedNs, so a number of
// pixels or of unknown unit cannot be sent as a time; a number becomes one
// only through `toNs`, written where it does.
export type Ns = number & { readonly __unit?: 'ns' };
export type BrandedNs = number & { readonly __unit: 'ns' };

/** `n`, known to be nanoseconds (since the recording origin, or a duration), as the API takes it. */
export function toNs(n: number): BrandedNs {
  return n as BrandedNs;
}

/**
 * `T` with every field named `…Ns`, at any depth, required to be a
 * BrandedNs (the contract names every time and duration so: startNs,
 * endNs, resolutionNs, …). Other fields are as in `T`.
 */
export type NsFields<T> = T extends object ? { [K in keyof T]: K extends `${string}Ns` ? BrandedIfNumber<T[K]> : NsFields<T[K]> } : T;
type BrandedIfNumber<V> = V extends number ? BrandedNs : V;

/** An API whose methods take their arguments as NsFields: what a page may call (answers are as they were). */
export type NsArguments<Api> = {
  [M in keyof Api]: Api[M] extends (...args: infer A) => infer R ? (...args: { [I in keyof A]: NsFields<A[I]> }) => R : Api[M];
};

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
