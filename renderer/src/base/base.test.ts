// Pure helpers of the renderer (no DOM): time labels. (Durations and bytes:
// test/contract/time.test.ts; kernel short names: test/report/names.test.ts.)
import { describe, expect, it } from 'vitest';
import { formatTimestamp, rulerLabels } from './time.ts';

describe('time labels', () => {
  it('timestamps to a precision', () => {
    expect(formatTimestamp(331_622_266)).toBe('331.622266 ms');
    expect(formatTimestamp(331_622_266, 1000)).toBe('331.622 ms');
  });
  it('ruler ticks: distinct labels, offsets from a base when deeply zoomed', () => {
    const coarse = rulerLabels(331_400_000, 200_000);
    expect(coarse.base).toBeNull();
    expect([331_400_000, 331_600_000].map(coarse.format)).toEqual(['331.4 ms', '331.6 ms']);
    const deep = rulerLabels(331_622_260, 20);
    expect(deep.base).not.toBeNull();
    const labels = [331_622_260, 331_622_280, 331_622_300].map(deep.format);
    expect(new Set(labels).size).toBe(3);
    expect(labels.every((l) => l.startsWith('+') && l.endsWith(' ns'))).toBe(true);
  });
});
