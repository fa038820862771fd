// The query layer the renderer talks to, on the real H100 recordings,
// checked against direct SQL.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';

const file = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');
const q = new RecordingQuery('abc123', file);
const db = new Database(file, { readonly: true });
afterAll(() => { q.close(); db.close(); });
const all = <T>(sql: string, ...a: unknown[]) => db.prepare(sql).all(...a) as T[];

describe('RecordingQuery', () => {
  it('summary: counts and streams as stored', () => {
    const s = q.summary();
    expect(s.counts.kernels).toBe(all<{ n: number }>('SELECT count(*) AS n FROM kernels')[0]!.n);
    expect(s.streams.map((x) => x.id).sort((a, b) => a - b)).toEqual(all<{ id: number }>('SELECT DISTINCT stream_id AS id FROM (SELECT stream_id FROM kernels UNION SELECT stream_id FROM memcpys) ORDER BY 1').map((r) => r.id));
    expect(s.streams.every((x) => x.kind === 'blocking')).toBe(true);
  });

  it('window at full resolution: exactly the stored items of the row', () => {
    const stream = q.summary().streams[0]!;
    const w = q.window({ rows: [stream.rowId], startNs: -1e12, endNs: 1e12, resolutionNs: 1 });
    const got = w.rows[0]!.items.map((i) => `${i.ref.table}:${i.ref.id}:${i.startNs}`).sort();
    const want = [
      ...all<{ id: number; s: number }>('SELECT id, start_ns AS s FROM kernels WHERE stream_id = ?', stream.id).map((r) => `kernels:${r.id}:${r.s}`),
      ...all<{ id: number; s: number }>('SELECT id, start_ns AS s FROM memcpys WHERE stream_id = ?', stream.id).map((r) => `memcpys:${r.id}:${r.s}`),
    ].sort();
    expect(got).toEqual(want);
    expect(w.rows[0]!.coverage).toEqual([]);
  });

  it('window at a coarse resolution: no items, bounded coverage that spans every op', () => {
    const s = q.summary();
    const res = (s.endNs - s.startNs) / 100; // a 100-pixel-wide view
    const w = q.window({ rows: s.streams.map((x) => x.rowId), startNs: s.startNs, endNs: s.endNs, resolutionNs: res });
    for (const row of w.rows) {
      expect(row.items).toEqual([]);
      expect(row.coverage.length).toBeGreaterThan(0);
      expect(row.coverage.length).toBeLessThanOrEqual(100);
      const id = Number(row.rowId.split(':')[1]);
      const span = all<{ s: number; e: number }>('SELECT min(start_ns) AS s, max(end_ns) AS e FROM (SELECT start_ns, end_ns FROM kernels WHERE stream_id = ? UNION ALL SELECT start_ns, end_ns FROM memcpys WHERE stream_id = ?)', id, id)[0]!;
      expect(Math.min(...row.coverage.map((c) => c.startNs))).toBeLessThanOrEqual(span.s);
      expect(Math.max(...row.coverage.map((c) => c.endNs))).toBeGreaterThanOrEqual(span.e);
    }
  });

  it('details: every stored column, and the launch both ways', () => {
    const k = all<Record<string, number>>('SELECT * FROM kernels LIMIT 1')[0]!;
    const d = q.details({ table: 'kernels', id: k.id! });
    for (const [col, v] of Object.entries(k)) expect(d.fields[col], col).toBe(v);
    expect(d.related).toHaveLength(1);
    expect(d.related[0]!.name).toBe('cudaLaunchKernel');
    const back = q.details(d.related[0]!.ref);
    expect(back.related.map((r) => r.ref)).toContainEqual({ table: 'kernels', id: k.id });
    expect(() => q.details({ table: 'kernels', id: 99999999 })).toThrow(/no such item/);
  });

  it('concurrency: one copy per direction at a time, kernels in flight where they ran', () => {
    const s = q.summary();
    const device = s.devices[0]!.id;
    const gpu = all<{ s: number; e: number }>('SELECT min(start_ns) AS s, max(end_ns) AS e FROM memcpys')[0]!;
    const c = q.concurrency({ deviceId: device, startNs: gpu.s, endNs: gpu.e, buckets: 200 });
    expect(Math.max(...c.h2d)).toBe(1);
    expect(Math.max(...c.d2h)).toBe(1);
    expect(Math.max(...c.kernels)).toBeGreaterThanOrEqual(1);
    // The HtoD engine is busy through most of the run (concurrent: copies back to back).
    expect(c.h2d.filter((x) => x > 0).length).toBeGreaterThan(100);
  });

  it('search and findings', () => {
    const r = q.search({ text: 'normaliseColumns' });
    expect(r.total).toBe(8);
    expect(r.items).toHaveLength(8);
    expect(q.findings().every((f) => f.severity === 'info')).toBe(true);
  });

  it('a bad file is an API error with a code and the file', () => {
    expect(() => new RecordingQuery('x', '/nonexistent/r.sqlite')).toThrow(expect.objectContaining({ code: 'not-found', file: '/nonexistent/r.sqlite' }));
  });
});
