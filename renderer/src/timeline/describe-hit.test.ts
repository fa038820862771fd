// What the timeline writes for a kernel (draw.ts: the box's label and its
// tooltip, describeHit) on a real window of a PyTorch recording: the label
// the window brings (WindowResponse.kernelLabels, told apart over the whole
// recording), not the bare function name its three instances share.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RecordingQuery } from '../../../profiler/query/recording-query.ts';
import { describeHit } from './draw.ts';

const torch = path.resolve(import.meta.dirname, '../../../test/fixtures/recordings/torch_streams.sqlite');

describe('describeHit: kernels', () => {
  it('torch_streams: the three vectorized_elementwise_kernel instances read apart in their tooltips', () => {
    const q = new RecordingQuery('t1', torch);
    try {
      const rows = q.summary().streams.map((s) => s.rowId);
      const w = q.window({ rows, startNs: -1e12, endNs: 1e12, resolutionNs: 1 });
      const titles = new Set(
        w.rows.flatMap((r) =>
          r.items.filter((it) => it.kind === 'kernel').map((it) => describeHit({ ...it, rowId: r.rowId, x: 0, y: 0, w: 1, h: 1 }, w).title),
        ),
      );
      expect([...titles].filter((t) => t.startsWith('vectorized_elementwise_kernel')).sort()).toEqual([
        'vectorized_elementwise_kernel<…, AUnaryFunctor<…>, …>',
        'vectorized_elementwise_kernel<…, BUnaryFunctor<…>, …>',
        'vectorized_elementwise_kernel<…, launch_clamp_scalar::{lambda(float)#1}, …>',
      ]);
      // A kernel the window brings no label for (the recording grew since): its short name.
      const one = w.rows.flatMap((r) => r.items.map((it) => ({ ...it, rowId: r.rowId }))).find((it) => it.kind === 'kernel')!;
      expect(describeHit({ ...one, x: 0, y: 0, w: 1, h: 1 }, { strings: w.strings, kernelLabels: {} }).title).not.toMatch(/^void /);
    } finally {
      q.close();
    }
  });
});
