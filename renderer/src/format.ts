// Durations for people: 850 ns, 12.4 µs, 3.21 ms, 1.50 s.
export function formatNs(ns: number): string {
  const a = Math.abs(ns);
  if (a < 1e3) return `${Math.round(ns)} ns`;
  if (a < 1e6) return `${(ns / 1e3).toPrecision(3)} µs`;
  if (a < 1e9) return `${(ns / 1e6).toPrecision(3)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

/**
 * Ruler labels: the unit and the decimals follow the tick step, so that
 * neighbouring ticks never print the same text (317.1 ms, 317.2 ms, ...).
 */
export function tickFormatter(stepNs: number): (ns: number) => string {
  const [unit, name] = stepNs >= 1e9 ? [1e9, 's'] : stepNs >= 1e6 ? [1e6, 'ms'] : stepNs >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
  const decimals = Math.max(0, Math.min(6, -Math.floor(Math.log10(stepNs / unit) + 1e-9)));
  return (ns) => `${(ns / unit).toFixed(decimals)} ${name}`;
}
