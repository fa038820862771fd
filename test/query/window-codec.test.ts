// The binary window answer of browser mode (profiler/contract/window-codec.ts):
// decoding what was encoded gives back exactly the answer RecordingQuery
// made — items, coverage, NVTX depths, names — on real H100 recordings and
// on a generated one dense enough to need coverage; anything else is
// rejected with a reason.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../bench/generate-recording.ts';
import type { WindowResponse } from '../../profiler/contract/api.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { decodeWindow, decodeWindowColumns, encodeWindow, windowColumnsOf, windowOfColumns } from '../../profiler/contract/window-codec.ts';
import { tempDir } from '../helpers/native.ts';

const fixture = (f: string) => path.resolve(import.meta.dirname, '../fixtures/recordings', f);
const dir = tempDir('window-codec');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every row of a recording (API calls, NVTX, streams), at the finest and at a coarse resolution. */
function windows(q: RecordingQuery): WindowResponse[] {
  const s = q.summary();
  const rows = [...s.streams.map((x) => x.rowId), ...s.processes.flatMap((p) => p.threads.flatMap((t) => [t.apiRowId, t.nvtxRowId]))];
  return [1, (s.endNs - s.startNs) / 500].map((resolutionNs) => q.window({ rows, startNs: s.startNs, endNs: s.endNs, resolutionNs }));
}

describe('window codec', () => {
  it('round-trips real recordings exactly (items, NVTX depths, coverage, names)', () => {
    for (const f of ['normalise-concurrent.sqlite', 'torch_streams.sqlite', 'matmul-events.sqlite']) {
      const q = new RecordingQuery(f, fixture(f));
      try {
        for (const w of windows(q)) {
          const bytes = encodeWindow(w);
          expect(decodeWindow(bytes), f).toEqual(w);
          // The columns the timeline reads: the same from the bytes (views) as from the objects.
          const cols = decodeWindowColumns(bytes);
          expect(cols, f).toEqual(windowColumnsOf(w));
          expect(windowOfColumns(cols), f).toEqual(w);
        }
      } finally {
        q.close();
      }
    }
    // The NVTX rows of normalise-concurrent carry depths, which must survive.
    const q = new RecordingQuery('n', fixture('normalise-concurrent.sqlite'));
    const w = windows(q)[0]!;
    q.close();
    expect(w.rows.some((r) => r.rowId.startsWith('nvtx:') && r.items.some((i) => i.depth !== undefined))).toBe(true);
  });

  it('round-trips a dense window of coverage spans, and is several times smaller than its JSON', () => {
    const file = path.join(dir, 'dense.sqlite');
    generate(file, 100_000, 8);
    const q = new RecordingQuery('d', file);
    try {
      const [fine, coarse] = windows(q);
      for (const w of [fine!, coarse!]) expect(decodeWindow(encodeWindow(w))).toEqual(w);
      expect(coarse!.rows.some((r) => r.coverage.length > 0)).toBe(true);
      expect(encodeWindow(fine!).byteLength * 2.5).toBeLessThan(JSON.stringify(fine).length);
    } finally {
      q.close();
    }
  });

  it('carries the concurrency tracks asked for', () => {
    const q = new RecordingQuery('n', fixture('normalise-concurrent.sqlite'));
    try {
      const s = q.summary();
      const rows = s.streams.map((x) => x.rowId);
      const w = q.window({ rows, startNs: s.startNs, endNs: s.endNs, resolutionNs: 1, concurrency: [{ deviceId: s.devices[0]!.id, rows, buckets: 200 }] });
      expect(w.concurrency).toHaveLength(1);
      expect(decodeWindow(encodeWindow(w))).toEqual(w);
    } finally {
      q.close();
    }
  });

  it('decodes from any offset of a buffer (an HTTP body is not aligned)', () => {
    const q = new RecordingQuery('n', fixture('normalise-concurrent.sqlite'));
    const w = windows(q)[0]!;
    q.close();
    const bytes = encodeWindow(w);
    const shifted = new Uint8Array(bytes.byteLength + 3);
    shifted.set(bytes, 3);
    expect(decodeWindow(shifted.subarray(3))).toEqual(w);
  });

  it('rejects what is not an encoded window, saying why', () => {
    const w = encodeWindow({
      startNs: 0,
      endNs: 10,
      strings: {},
      kernelLabels: {},
      rows: [{ rowId: 'stream:1', items: [], coverage: [{ startNs: 1, endNs: 2, count: 3, kind: 'kernel' }] }],
    });
    expect(() => decodeWindow(new TextEncoder().encode('{"rows": []}'))).toThrow(/wrong magic/);
    expect(() => decodeWindow(w.subarray(0, 5))).toThrow(/5 bytes/);
    expect(() => decodeWindow(w.subarray(0, w.byteLength - 1))).toThrow(/header promises/);
  });
});
