// The timeline's concurrency track, computed from the rows of a window answer
// (profiler/query/window-concurrency.ts), against the exact
// sweep over every operation (profiler/query/concurrency.ts) on real H100
// recordings: equal where the window holds items; where sub-pixel operations
// were merged into coverage, every busy stream is still counted.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { concurrencyOf } from '../../profiler/query/concurrency.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import type { WindowRow } from '../../profiler/contract/api.ts';
import { concurrencyFromRows } from '../../profiler/query/window-concurrency.ts';

const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);

describe('concurrency track from the window', () => {
  for (const name of ['normalise-concurrent', 'matmul-concurrent', 'transpose-default-stream', 'torch_streams']) {
    it(`${name}: equal to the exact sweep at full detail, an upper bound when merged`, () => {
      const q = new RecordingQuery('t', fixture(name));
      try {
        const s = q.summary();
        const trace = q.analysis().trace;
        for (const d of s.devices) {
          const rows = s.streams.filter((st) => st.deviceId === d.id).map((st) => st.rowId);
          if (rows.length === 0) continue;
          const { start, end } = trace.span;
          const buckets = 800;
          const exact = concurrencyOf(trace, { deviceId: d.id, startNs: start, endNs: end, buckets });
          const fine = q.window({ rows, startNs: start, endNs: end, resolutionNs: 1 });
          const got = concurrencyFromRows(d.id, fine.rows, start, end, buckets);
          expect(got.kernels).toEqual(exact.kernels);
          expect(got.h2d).toEqual(exact.h2d);
          expect(got.d2h).toEqual(exact.d2h);
          expect(Math.max(...got.kernels, ...got.h2d, ...got.d2h)).toBeGreaterThan(0);
          const coarse = q.window({ rows, startNs: start, endNs: end, resolutionNs: (end - start) / 200 });
          const merged = concurrencyFromRows(d.id, coarse.rows, start, end, buckets);
          // A merged span has one kind (its most frequent), so a track may lose an operation to
          // another; but every stream busy at an instant is counted by one track then.
          for (let b = 0; b < buckets; b++) {
            const busy = merged.kernels[b]! + merged.h2d[b]! + merged.d2h[b]! + merged.other[b]!;
            expect(busy).toBeGreaterThanOrEqual(Math.max(exact.kernels[b]!, exact.h2d[b]!, exact.d2h[b]!, exact.other[b]!));
          }
        }
      } finally {
        q.close();
      }
    });
  }

  it('rows whose operations overlap or come out of order (imported traces): still the exact maximum per bucket', () => {
    let seed = 11;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const kinds = ['kernel', 'memcpy-h2d', 'memcpy-d2h', 'memset'] as const;
    const rows: WindowRow[] = Array.from({ length: 6 }, (_, r) => ({
      rowId: `stream:${r + 1}`,
      items: Array.from({ length: 40 }, (_, i) => {
        const startNs = Math.floor(rnd() * 1200) - 100;
        return {
          ref: { table: 'kernels' as const, id: r * 100 + i },
          kind: kinds[Math.floor(rnd() * kinds.length)]!,
          startNs,
          endNs: startNs + Math.floor(rnd() * 120),
          nameId: 0,
        };
      }),
      coverage: [],
    }));
    const buckets = 50;
    const got = concurrencyFromRows(0, rows, 0, 1000, buckets);
    // By brute force: at the bucket's start and at each start inside it, the operations [start, end) running.
    const all = rows.flatMap((r) => r.items);
    for (const [track, kind] of [
      ['kernels', 'kernel'],
      ['h2d', 'memcpy-h2d'],
      ['d2h', 'memcpy-d2h'],
      ['other', 'memset'],
    ] as const) {
      const ops = all.filter((o) => o.kind === kind && o.endNs > o.startNs);
      const want = Array.from({ length: buckets }, (_, b) => {
        const [a, z] = [b * 20, (b + 1) * 20];
        const instants = [a, ...ops.map((o) => o.startNs).filter((t) => t >= a && t < z)];
        return Math.max(...instants.map((t) => ops.filter((o) => o.startNs <= t && t < o.endNs).length));
      });
      expect(got[track], track).toEqual(want);
    }
  });

  it('window() answers the tracks asked for with the rows it sends, counting rows it does not send', () => {
    const q = new RecordingQuery('t', fixture('normalise-concurrent'));
    try {
      const s = q.summary();
      const d = s.devices[0]!;
      const streamRows = s.streams.filter((st) => st.deviceId === d.id).map((st) => st.rowId);
      const { startNs, endNs } = s;
      const full = q.window({ rows: streamRows, startNs, endNs, resolutionNs: 1 });
      const want = concurrencyFromRows(d.id, full.rows, startNs, endNs, 300);
      // Only one row shown; the track still counts every stream of the device.
      const w = q.window({ rows: [streamRows[0]!], startNs, endNs, resolutionNs: 1, concurrency: [{ deviceId: d.id, rows: streamRows, buckets: 300 }] });
      expect(w.rows.map((r) => r.rowId)).toEqual([streamRows[0]]);
      expect(w.concurrency).toEqual([want]);
      // ...which differs from what the shown row alone would give.
      expect(concurrencyFromRows(d.id, w.rows, startNs, endNs, 300)).not.toEqual(want);
      expect(q.window({ rows: [streamRows[0]!], startNs, endNs, resolutionNs: 1 }).concurrency).toBeUndefined();
    } finally {
      q.close();
    }
  });
});
