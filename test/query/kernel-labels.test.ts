// A recording's kernel labels (profiler/query/kernel-labels.ts) on real
// recordings: every kernel name once, as readableNames labels them over
// the whole recording, the instances of one template apart; and as the
// timeline gets them, with each window (RecordingQuery.window; how it
// draws them: renderer/src/timeline/describe-hit.test.ts).
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { kernelLabels } from '../../profiler/query/kernel-labels.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');

describe('kernelLabels', () => {
  it.each(['torch_streams', 'torch_train_loop', 'normalise-concurrent'])('%s: one distinct label per kernel name, by strings id', (name) => {
    const db = new Database(path.join(fixtures, `${name}.sqlite`), { readonly: true });
    try {
      const labels = kernelLabels(db);
      const ids = (db.prepare('SELECT DISTINCT name_id AS id FROM kernels').all() as { id: number }[]).map((r) => r.id).sort((a, b) => a - b);
      expect([...labels.keys()].sort((a, b) => a - b)).toEqual(ids);
      expect(new Set(labels.values()).size).toBe(ids.length);
      for (const l of labels.values()) expect(l).not.toMatch(/^_Z|^void /);
    } finally {
      db.close();
    }
  });

  it('torch_streams: the three vectorized_elementwise_kernel instances by their functors', () => {
    const db = new Database(path.join(fixtures, 'torch_streams.sqlite'), { readonly: true });
    try {
      const labels = [...kernelLabels(db).values()].filter((l) => l.startsWith('vectorized_elementwise_kernel'));
      expect(labels.sort()).toEqual([
        'vectorized_elementwise_kernel<…, AUnaryFunctor<…>, …>',
        'vectorized_elementwise_kernel<…, BUnaryFunctor<…>, …>',
        'vectorized_elementwise_kernel<…, launch_clamp_scalar::{lambda(float)#1}, …>',
      ]);
    } finally {
      db.close();
    }
  });

  it('torch_streams: a window at any zoom names its kernels by them', () => {
    const q = new RecordingQuery('t1', path.join(fixtures, 'torch_streams.sqlite'));
    try {
      const streams = q.summary().streams.filter((s) => s.counts.kernels > 0);
      const whole = q.window({ rows: streams.map((s) => s.rowId), startNs: -1e12, endNs: 1e12, resolutionNs: 1 });
      const items = whole.rows.flatMap((r) => r.items).filter((it) => it.kind === 'kernel');
      expect(items.length).toBeGreaterThan(60);
      const named = new Set(items.map((it) => whole.kernelLabels[it.nameId]));
      expect([...named].filter((l) => l?.startsWith('vectorized_elementwise_kernel'))).toHaveLength(3);
      expect(named.has(undefined)).toBe(false);
      // A window holding one kernel labels it as the whole recording does, not as alone in it.
      const one = items.find((it) => whole.kernelLabels[it.nameId]!.includes('BUnaryFunctor'))!;
      const narrow = q.window({ rows: streams.map((s) => s.rowId), startNs: one.startNs, endNs: one.endNs, resolutionNs: 1 });
      expect(narrow.kernelLabels[one.nameId]).toBe(whole.kernelLabels[one.nameId]);
    } finally {
      q.close();
    }
  });
});
