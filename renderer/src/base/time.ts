// Times in the renderer are integer nanoseconds relative to the recording
// origin (as the API sends them). Durations and byte counts are printed as
// the CLI prints them (profiler/contract/time.ts); these are the views' own
// forms: points in time, ruler labels, percentages.

/** A point in time since the recording origin, precise to `precisionNs`: 331.433753 ms. */
export function formatTimestamp(ns: number, precisionNs = 1): string {
  const [unit, name] = unitOf(Math.max(Math.abs(ns), 1));
  const decimals = Math.max(0, Math.min(9, Math.ceil(Math.log10(unit / Math.max(1, precisionNs)))));
  return `${(ns / unit).toFixed(decimals)} ${name}`;
}

function unitOf(ns: number): [number, string] {
  return ns >= 1e9 ? [1e9, 's'] : ns >= 1e6 ? [1e6, 'ms'] : ns >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
}

/**
 * Ruler labels. The unit follows the size of the times shown and the
 * decimals follow the tick step, so neighbouring ticks never print the same
 * text. Deep zooms (more than 3 decimals needed) switch to offsets from a
 * base shown once: base "331.433 ms", ticks "+20 ns", "+40 ns".
 */
export function rulerLabels(firstTick: number, stepNs: number): { base: number | null; format: (ns: number) => string } {
  const [unit, name] = unitOf(Math.max(Math.abs(firstTick), stepNs));
  const decimals = Math.max(0, Math.ceil(-Math.log10(stepNs / unit) - 1e-9));
  if (decimals <= 3) return { base: null, format: (ns) => `${(ns / unit).toFixed(decimals)} ${name}` };
  const [su, sn] = unitOf(stepNs * 10);
  const sd = Math.max(0, Math.ceil(-Math.log10(stepNs / su) - 1e-9));
  const base = Math.floor(firstTick / (stepNs * 10)) * stepNs * 10;
  return { base, format: (ns) => `+${((ns - base) / su).toFixed(sd)} ${sn}` };
}

export function formatPercent(share: number): string {
  return `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`;
}
