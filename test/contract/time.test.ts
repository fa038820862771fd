// Durations and byte counts as people read them, the same in the CLI's
// reports and in the app (profiler/contract/time.ts): three significant
// digits, the unit following the size.
import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, gigabytesPerSecond } from '../../profiler/contract/time.ts';

describe('durations and sizes', () => {
  it('durations take the unit that keeps three significant digits', () => {
    expect(formatDuration(850)).toBe('850 ns');
    expect(formatDuration(12_400)).toBe('12.4 µs');
    expect(formatDuration(3_210_000)).toBe('3.21 ms');
    expect(formatDuration(1_500_000_000)).toBe('1.50 s');
    // A negative difference (a diff's delta) keeps its sign and the unit of its size.
    expect(formatDuration(-3_210_000)).toBe('-3.21 ms');
  });

  it('byte counts in binary units, negative ones too', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(9.16 * 1024 * 1024)).toBe('9.16 MiB');
    expect(formatBytes(24 * 1024 * 1024)).toBe('24.0 MiB');
    expect(formatBytes(-2048)).toBe('-2.00 KiB');
  });

  it('bytes per nanosecond are GB/s; no time, no rate', () => {
    expect(gigabytesPerSecond(4e9, 1e9)).toBe(4);
    expect(gigabytesPerSecond(4e9, 0)).toBeNull();
  });
});
