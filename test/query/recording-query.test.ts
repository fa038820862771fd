// The query layer the renderer talks to, on the real H100 recordings and on
// a generated 200k-operation one, checked against direct SQL.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../bench/generate-recording.ts';
import type { CoverageSpan, TimelineItem } from '../../profiler/contract/api.ts';
import { RecordingWriter } from '../../profiler/import/recording-writer.ts';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { buildStats } from '../../profiler/query/stats.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { ZONE_ROWS } from '../../profiler/store/zone-tables.ts';
import { tempDir } from '../helpers/native.ts';

const fixture = (name: string) => path.resolve(import.meta.dirname, '../fixtures/recordings', name);
const file = fixture('normalise-concurrent.sqlite');
const q = new RecordingQuery('abc123', file);
const db = new Database(file, { readonly: true });
afterAll(() => {
  q.close();
  db.close();
});
const all = <T>(sql: string, ...a: unknown[]) => db.prepare(sql).all(...a) as T[];
const one = <T>(sql: string, ...a: unknown[]) => db.prepare(sql).get(...a) as T;
const count = (sql: string, ...a: unknown[]) =>
  db
    .prepare(sql)
    .pluck()
    .get(...a) as number;
/** The runner's one kernel, as CUPTI names it (mangled). */
const kernelName = db.prepare('SELECT s.value FROM kernels k JOIN strings s ON s.id = k.name_id LIMIT 1').pluck().get() as string;
/** … and as people read it: `runner::(anonymous namespace)::normaliseColumns(double const*, double*, int)`. */
const kernelDemangled = db.prepare('SELECT s.demangled FROM kernels k JOIN strings s ON s.id = k.name_id LIMIT 1').pluck().get() as string;

describe('summary', () => {
  it('counts, streams, threads and devices as stored', () => {
    const s = q.summary();
    expect(s.counts).toEqual({
      kernels: count('SELECT count(*) FROM kernels'),
      memcpys: count('SELECT count(*) FROM memcpys'),
      memsets: count('SELECT count(*) FROM memsets'),
      syncs: count('SELECT count(*) FROM syncs'),
      apiCalls: count('SELECT count(*) FROM api_calls'),
      nvtxRanges: count('SELECT count(*) FROM nvtx_ranges'),
    });
    const used = all<{ id: number }>(
      'SELECT DISTINCT stream_id AS id FROM (SELECT stream_id FROM kernels UNION SELECT stream_id FROM memcpys UNION SELECT stream_id FROM syncs WHERE stream_id IS NOT NULL) ORDER BY 1',
    );
    expect(s.streams.map((x) => x.id).sort((a, b) => a - b)).toEqual(used.map((r) => r.id));
    for (const st of s.streams) {
      expect(st.rowId).toBe(`stream:${st.id}`);
      expect(st.counts.kernels).toBe(count('SELECT count(*) FROM kernels WHERE stream_id = ?', st.id));
      expect(st.counts.memcpys).toBe(count('SELECT count(*) FROM memcpys WHERE stream_id = ?', st.id));
      expect(st.busyNs).toBe(
        count(
          'SELECT coalesce(sum(end_ns - start_ns), 0) FROM (SELECT start_ns, end_ns FROM kernels WHERE stream_id = @id UNION ALL SELECT start_ns, end_ns FROM memcpys WHERE stream_id = @id)',
          { id: st.id },
        ),
      );
    }
    // The bundled runner's scenario creates its streams with cudaStreamCreate: blocking.
    expect(s.streams.every((x) => x.kind === 'blocking')).toBe(true);
    const threads = s.processes.flatMap((p) => p.threads);
    expect(threads.reduce((n, t) => n + t.apiCalls, 0)).toBe(s.counts.apiCalls);
    expect(threads.reduce((n, t) => n + t.nvtxRanges, 0)).toBe(s.counts.nvtxRanges);
    for (const t of threads) expect([t.apiRowId, t.nvtxRowId]).toEqual([`api:${t.pid}:${t.tid}`, `nvtx:${t.pid}:${t.tid}`]);
    expect(s.devices.map((d) => d.name)).toEqual(all<{ name: string }>('SELECT name FROM devices ORDER BY id').map((d) => d.name));
    expect(s.complete).toBe(true);
    expect(s.warnings).toEqual([]);
    expect(q.summary()).toBe(s); // computed once
  });

  it('stream kinds from streams.flags, and warnings of an incomplete recording', () => {
    const ptds = new RecordingQuery('p', fixture('per-thread-default-stream.sqlite'));
    const crashed = new RecordingQuery('c', fixture('crashed.sqlite'));
    try {
      expect(new Set(ptds.summary().streams.map((s) => s.kind))).toContain('per-thread-default');
      const s = crashed.summary();
      expect(s.complete).toBe(false);
      expect(s.warnings.join('\n')).toMatch(/incomplete recording/);
    } finally {
      ptds.close();
      crashed.close();
    }
  });
});

describe('window', () => {
  it('at full resolution: exactly the stored items of each stream row, nothing merged', () => {
    for (const stream of q.summary().streams) {
      const w = q.window({ rows: [stream.rowId], startNs: -1e12, endNs: 1e12, resolutionNs: 1 });
      const got = w.rows[0]!.items.map((i) => `${i.ref.table}:${i.ref.id}:${i.startNs}:${i.endNs}`).sort();
      const want = ['kernels', 'memcpys', 'memsets', 'syncs']
        .flatMap((t) =>
          all<{ id: number; s: number; e: number }>(`SELECT id, start_ns AS s, end_ns AS e FROM ${t} WHERE stream_id = ?`, stream.id).map(
            (r) => `${t}:${r.id}:${r.s}:${r.e}`,
          ),
        )
        .sort();
      expect(got).toEqual(want);
      expect(w.rows[0]!.coverage).toEqual([]);
      for (const it of w.rows[0]!.items) if (it.ref.table === 'kernels') expect(w.strings[it.nameId]).toBe(kernelDemangled);
    }
  });

  it('copies are coloured by direction', () => {
    const stream = q.summary().streams.find((s) => s.counts.memcpys > 0)!;
    const w = q.window({ rows: [stream.rowId], startNs: -1e12, endNs: 1e12, resolutionNs: 1 });
    const kinds = new Map(all<{ id: number; k: number }>('SELECT id, copy_kind AS k FROM memcpys WHERE stream_id = ?', stream.id).map((r) => [r.id, r.k]));
    for (const it of w.rows[0]!.items.filter((i) => i.ref.table === 'memcpys')) {
      expect(it.kind).toBe(kinds.get(it.ref.id) === 1 ? 'memcpy-h2d' : 'memcpy-d2h');
    }
  });

  it('NVTX rows carry their nesting depth', () => {
    const t = q
      .summary()
      .processes.flatMap((p) => p.threads)
      .find((x) => x.nvtxRanges > 0)!;
    const w = q.window({ rows: [t.nvtxRowId], startNs: -1e12, endNs: 1e12, resolutionNs: 1 });
    const items = w.rows[0]!.items;
    expect(items).toHaveLength(t.nvtxRanges);
    // Depth = number of other ranges of the thread that enclose this one.
    const ranges = all<{ id: number; s: number; e: number }>('SELECT id, start_ns AS s, end_ns AS e FROM nvtx_ranges WHERE pid = ? AND tid = ?', t.pid, t.tid);
    for (const it of items) {
      const r = ranges.find((x) => x.id === it.ref.id)!;
      expect(it.depth, `range ${r.id}`).toBe(ranges.filter((o) => o.id !== r.id && o.s <= r.s && o.e >= r.e).length);
    }
    expect(Math.max(...items.map((i) => i.depth!))).toBe(1);
  });

  it('API rows: every call of the thread, named', () => {
    const t = q
      .summary()
      .processes.flatMap((p) => p.threads)
      .sort((a, b) => b.apiCalls - a.apiCalls)[0]!;
    const w = q.window({ rows: [t.apiRowId], startNs: -1e12, endNs: 1e12, resolutionNs: 1 });
    const row = w.rows[0]!;
    expect(row.items.length + row.coverage.reduce((n, c) => n + c.count, 0)).toBe(t.apiCalls);
    expect(new Set(row.items.map((i) => w.strings[i.nameId]))).toContain('cudaLaunchKernel');
  });

  it('unknown rows are a bad request', () => {
    expect(() => q.window({ rows: ['stream:x'], startNs: 0, endNs: 1, resolutionNs: 1 })).toThrow(expect.objectContaining({ code: 'bad-request' }));
    expect(() => q.window({ rows: [], startNs: 1, endNs: 0, resolutionNs: 1 })).toThrow(expect.objectContaining({ code: 'bad-request' }));
  });
});

describe('window on 200k generated operations over 64 streams', () => {
  let big: RecordingQuery;
  let bigDb: Database.Database;
  let dir: string;
  beforeAll(() => {
    dir = tempDir('query');
    const f = path.join(dir, 'generated.sqlite');
    generate(f, 200_000, 64, { devices: 2 });
    big = new RecordingQuery('big', f);
    bigDb = new Database(f, { readonly: true });
  });
  afterAll(() => {
    big.close();
    bigDb.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Every op of the stream lies inside an item or a coverage span of the row. */
  function expectCovered(streamId: number, items: TimelineItem[], coverage: CoverageSpan[], from: number, to: number) {
    const spans = [...items.map((i) => [i.startNs, i.endNs] as const), ...coverage.map((c) => [c.startNs, c.endNs] as const)].sort((a, b) => a[0] - b[0]);
    const ops = bigDb
      .prepare(
        `SELECT start_ns AS s, end_ns AS e FROM kernels WHERE stream_id = @id AND end_ns >= @from AND start_ns <= @to
        UNION ALL SELECT start_ns, end_ns FROM memcpys WHERE stream_id = @id AND end_ns >= @from AND start_ns <= @to ORDER BY 1`,
      )
      .all({ id: streamId, from, to }) as { s: number; e: number }[];
    expect(ops.length).toBeGreaterThan(0);
    let k = 0;
    for (const op of ops) {
      while (k < spans.length && spans[k]![1] < op.s) k++;
      const inside = spans.slice(Math.max(0, k - 2), k + 2).some(([s, e]) => s <= op.s && e >= op.e);
      if (!inside) throw new Error(`op [${op.s}, ${op.e}] of stream ${streamId} is neither an item nor covered`);
    }
    const counted = items.length + coverage.reduce((n, c) => n + c.count, 0);
    expect(counted).toBe(ops.length);
  }

  it('whole recording, 1600 pixels: a bounded answer per row that still covers every op', () => {
    const s = big.summary();
    expect(s.counts.kernels + s.counts.memcpys).toBe(200_000);
    expect(s.devices).toHaveLength(2);
    const pixels = 1600;
    const res = (s.endNs - s.startNs) / pixels;
    const w = big.window({ rows: s.streams.map((x) => x.rowId), startNs: s.startNs, endNs: s.endNs, resolutionNs: res });
    expect(w.rows).toHaveLength(64);
    for (const row of w.rows) {
      expect(row.items).toEqual([]); // every op is far shorter than a pixel (≥ 250 µs)
      expect(row.items.length + row.coverage.length).toBeLessThanOrEqual(pixels + 2);
      expectCovered(Number(row.rowId.split(':')[1]), row.items, row.coverage, s.startNs, s.endNs);
    }
  });

  it('zoomed in to about 100 ops of a stream: items one by one, bounded', () => {
    const s = big.summary();
    const st = s.streams[5]!;
    const first = bigDb.prepare('SELECT min(start_ns) FROM kernels WHERE stream_id = ?').pluck().get(st.id) as number;
    const from = first + 5_000_000;
    const to = from + 10_000_000; // 10 ms: ~100 ops of 1–200 µs with gaps
    const pixels = 2000;
    const w = big.window({ rows: [st.rowId], startNs: from, endNs: to, resolutionNs: (to - from) / pixels });
    const row = w.rows[0]!;
    expect(row.items.length).toBeGreaterThan(50);
    expect(row.items.length + row.coverage.length).toBeLessThanOrEqual(pixels + 2);
    expectCovered(st.id, row.items, row.coverage, from, to);
    for (const it of row.items) expect(it.endNs - it.startNs).toBeGreaterThanOrEqual((to - from) / pixels);
  });

  it('API calls of a generated launch lead to their kernel and back', () => {
    const k = bigDb.prepare('SELECT id, correlation_id AS c FROM kernels LIMIT 1 OFFSET 777').get() as { id: number; c: number };
    const d = big.details({ table: 'kernels', id: k.id });
    expect(d.related).toHaveLength(1);
    expect(d.related[0]!.ref.table).toBe('api_calls');
    const api = bigDb.prepare('SELECT correlation_id AS c FROM api_calls WHERE id = ?').get(d.related[0]!.ref.id) as { c: number };
    expect(api.c).toBe(k.c);
  });
});

describe('window: zones drawn whole from their shape (schema 6)', () => {
  // 100k ops over 4 streams: several zones per stream and table, so a
  // window holds zones wholly inside it (drawn from the zone) and zones
  // crossing its edges (read row by row).
  let dir: string;
  let shaped: RecordingQuery;
  let rowsOnly: RecordingQuery;
  let zones: { lane: number; s: number; e: number; dur: number; gap: number }[];
  beforeAll(() => {
    dir = tempDir('zone-shape');
    const f = path.join(dir, 'shaped.sqlite');
    generate(f, 100_000, 4);
    // The same recording without zone shapes: every window goes row by row.
    const g = path.join(dir, 'rows-only.sqlite');
    fs.copyFileSync(f, g);
    const db = new Database(g);
    db.exec('UPDATE zones SET max_dur_ns = NULL, max_gap_ns = NULL, copy_kind_rows = NULL');
    zones = new Database(f, { readonly: true })
      .prepare('SELECT lane, start_ns AS s, end_ns AS e, max_dur_ns AS dur, max_gap_ns AS gap FROM zones WHERE table_id IN (1, 2)')
      .all() as typeof zones;
    db.close();
    shaped = new RecordingQuery('shaped', f);
    rowsOnly = new RecordingQuery('rows-only', g);
  });
  afterAll(() => {
    shaped.close();
    rowsOnly.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A recording and its copy without zone shapes. */
  function withAndWithoutShapes(name: string, write: (w: RecordingWriter) => void): [RecordingQuery, RecordingQuery] {
    const f = path.join(dir, `${name}.sqlite`);
    const w = new RecordingWriter(f, { overwrite: true, originNs: 0 });
    w.device(0, { name: 'GPU', smCount: 132, ccMajor: 9, ccMinor: 0, totalMemoryBytes: 2 ** 30 });
    w.streamFacts(0, 1, 7, 1, { flags: 2 });
    write(w);
    w.finish({ command: name });
    const g = path.join(dir, `${name}-rows-only.sqlite`);
    fs.copyFileSync(f, g);
    const db = new Database(g);
    db.exec('UPDATE zones SET max_dur_ns = NULL, max_gap_ns = NULL, copy_kind_rows = NULL');
    db.close();
    return [new RecordingQuery(name, f), new RecordingQuery(`${name}-rows-only`, g)];
  }

  it('a zone with one gap wider than a pixel, or one row longer than a pixel, is read row by row', () => {
    // One stream, 3 zones of 1 µs kernels 1 µs apart; the second zone has one 10 ms gap, the third one 10 ms kernel.
    const [a, b] = withAndWithoutShapes('gappy', (w) => {
      let t = 0;
      for (let i = 0; i < 3 * ZONE_ROWS; i++) {
        if (i === ZONE_ROWS + 100) t += 10_000_000;
        const dur = i === 2 * ZONE_ROWS + 100 ? 10_000_000 : 1000;
        w.kernel({
          start: t,
          end: t + dur,
          device: 0,
          context: 1,
          stream: 7,
          pid: 1,
          correlation: i + 1,
          name: 'k',
          grid: [1, 1, 1],
          block: [32, 1, 1],
          registers: 8,
        });
        t += dur + 1000;
      }
    });
    const s = a.summary();
    const req = { rows: [s.streams[0]!.rowId], startNs: s.startNs, endNs: s.endNs, resolutionNs: 1_000_000 };
    const got = a.window(req);
    expect(got).toEqual(b.window(req));
    // The gap splits the coverage; the long kernel is an item.
    expect(got.rows[0]!.coverage.length).toBe(3);
    expect(got.rows[0]!.items).toHaveLength(1);
    a.close();
    b.close();
  });

  it('gives exactly the answer of reading every row, at any zoom', () => {
    const s = shaped.summary();
    const span = s.endNs - s.startNs;
    const rows = [...s.streams.map((x) => x.rowId), ...s.processes.flatMap((p) => p.threads.map((t) => t.apiRowId))];
    const windows = [
      [s.startNs, s.endNs, 1600], // whole recording
      [s.startNs + span * 0.3, s.startNs + span * 0.7, 1000], // zones inside and across the edges
      [s.startNs + span * 0.5, s.startNs + span * 0.5 + 20_000_000, 1000], // 20 ms: items
    ] as const;
    let drawnWhole = 0;
    for (const [from, to, px] of windows) {
      const req = { rows, startNs: Math.round(from), endNs: Math.round(to), resolutionNs: (to - from) / px };
      drawnWhole += zones.filter((z) => z.s >= req.startNs && z.e <= req.endNs && z.dur < req.resolutionNs && z.gap < req.resolutionNs).length;
      expect(shaped.window(req)).toEqual(rowsOnly.window(req));
    }
    // The shortcut was taken (the zones' shape allowed it), not just skipped.
    expect(drawnWhole).toBeGreaterThan(10);
  });
});

describe('details', () => {
  it('every stored column of a kernel, its shape, and the launch both ways', () => {
    const k = one<Record<string, number>>('SELECT * FROM kernels LIMIT 1');
    const d = q.details({ table: 'kernels', id: k.id! });
    for (const [col, v] of Object.entries(k)) expect(d.fields[col], col).toBe(v);
    expect(d.fields.grid).toBe(`${k.grid_x}×${k.grid_y}×${k.grid_z}`);
    expect(d.fields.block).toBe(`${k.block_x}×${k.block_y}×${k.block_z}`);
    expect(d.name).toBe(kernelName);
    expect(d.demangledName).toBe(kernelDemangled);
    expect(d.rowId).toBe(`stream:${k.stream_id}`);
    expect(d.durationNs).toBe(k.end_ns! - k.start_ns!);
    expect(d.related).toHaveLength(1);
    const call = d.related[0]!;
    expect(call.name).toBe('cudaLaunchKernel');
    const stored = one<{ correlation_id: number; pid: number; tid: number }>('SELECT correlation_id, pid, tid FROM api_calls WHERE id = ?', call.ref.id);
    expect(stored.correlation_id).toBe(k.correlation_id);
    expect(call.rowId).toBe(`api:${stored.pid}:${stored.tid}`);
    const back = q.details(call.ref);
    expect(back.kind).toBe('api');
    expect(back.related.map((r) => r.ref)).toContainEqual({ table: 'kernels', id: k.id });
  });

  it('a copy: raw columns, direction and memory kinds named, GB/s', () => {
    const m = one<Record<string, number>>('SELECT * FROM memcpys WHERE copy_kind = 1 LIMIT 1');
    const d = q.details({ table: 'memcpys', id: m.id! });
    for (const [col, v] of Object.entries(m)) expect(d.fields[col], col).toBe(v);
    expect(d.kind).toBe('memcpy-h2d');
    expect(d.fields.copy_kind_name).toBe('HtoD');
    expect(d.fields.src).toBe('pinned');
    expect(d.fields.dst).toBe('device');
    expect(d.fields['GB/s']).toBeCloseTo(m.bytes! / (m.end_ns! - m.start_ns!), 2);
    expect(d.fields.stream_kind).toBe('blocking');
    expect(d.fields.duration_ns).toBe(m.end_ns! - m.start_ns!);
    expect(d.related.map((r) => r.name)).toEqual(['cudaMemcpyAsync']);
  });

  it('unknown items and tables', () => {
    expect(() => q.details({ table: 'kernels', id: 99999999 })).toThrow(expect.objectContaining({ code: 'not-found' }));
    expect(() => q.details({ table: 'sqlite_schema' as never, id: 1 })).toThrow(expect.objectContaining({ code: 'bad-request' }));
  });
});

describe('search', () => {
  it('pages: each page after the last item of the one before, together exactly the matches in order', () => {
    const all = q.search({ text: '', limit: 10_000 });
    expect(all.total).toBe(all.items.length); // everything fits: the oracle
    expect(all.total).toBeGreaterThan(50);
    const paged: typeof all.items = [];
    let after: { startNs: number; table: (typeof all.items)[number]['ref']['table']; id: number } | undefined;
    for (let page = 0; page < 1000; page++) {
      const r = q.search({ text: '', limit: 7, ...(after ? { after } : {}) });
      expect(r.total).toBe(all.total); // the count is of every match, whatever the page
      paged.push(...r.items);
      if (r.items.length < 7) break;
      const last = r.items[r.items.length - 1]!;
      after = { startNs: last.startNs, table: last.ref.table, id: last.ref.id };
    }
    expect(paged).toEqual(all.items);
    // Ties in start across tables are ordered by table, then id.
    for (let i = 1; i < paged.length; i++) {
      const [a, b] = [paged[i - 1]!, paged[i]!];
      if (a.startNs === b.startNs) expect(a.ref.table < b.ref.table || (a.ref.table === b.ref.table && a.ref.id < b.ref.id)).toBe(true);
    }
  });

  it('kernel names, case-insensitive, with counts and items in time order', () => {
    const r = q.search({ text: 'NORMALISEcolumns' });
    expect(r.total).toBe(8);
    expect(r.names).toEqual([
      { nameId: expect.any(Number), name: kernelName, demangledName: kernelDemangled, count: 8, totalNs: count('SELECT sum(end_ns - start_ns) FROM kernels') },
    ]);
    expect(r.items).toHaveLength(8);
    expect(r.items.map((i) => i.startNs)).toEqual([...r.items.map((i) => i.startNs)].sort((a, b) => a - b));
    expect(r.items.every((i) => i.rowId.startsWith('stream:') && i.kind === 'kernel')).toBe(true);
  });

  it('API and NVTX names, the kinds filter and the limit', () => {
    const api = q.search({ text: 'cudaMemcpyAsync', kinds: ['api'], limit: 3 });
    expect(api.total).toBe(count("SELECT count(*) FROM api_calls a JOIN strings s ON s.id = a.name_id WHERE s.value LIKE '%cudaMemcpyAsync%'"));
    expect(api.items).toHaveLength(3);
    expect(api.items.every((i) => i.kind === 'api' && i.rowId.startsWith('api:'))).toBe(true);
    expect(q.search({ text: 'normaliseColumns', kinds: ['api'] }).total).toBe(0);
    const everything = q.search({ text: '', limit: 0 });
    expect(everything.total).toBe(Object.values(q.summary().counts).reduce((a, b) => a + b, 0));
    expect(everything.items).toEqual([]);
    const nvtx = q.search({ text: '', kinds: ['nvtx'] });
    expect(nvtx.total).toBe(13);
    expect(nvtx.items.every((i) => i.rowId.startsWith('nvtx:'))).toBe(true);
    expect(q.search({ text: '%' }).total).toBe(0); // no LIKE wildcards
  });

  it('copies and synchronizations by kind and by the names details() gives them', () => {
    const h2d = q.search({ text: '', kinds: ['memcpy-h2d'], limit: 1000 });
    expect(h2d.total).toBe(count('SELECT count(*) FROM memcpys WHERE copy_kind = 1'));
    expect(h2d.names).toEqual([
      {
        nameId: 0,
        name: 'Memcpy HtoD',
        demangledName: null,
        count: h2d.total,
        totalNs: count('SELECT sum(end_ns - start_ns) FROM memcpys WHERE copy_kind = 1'),
      },
    ]);
    expect(h2d.items.every((i) => i.kind === 'memcpy-h2d' && i.nameId === 0)).toBe(true);
    const first = h2d.items[0]!;
    expect(q.details(first.ref).name).toBe('Memcpy HtoD');
    expect(q.search({ text: 'memcpy dtoh' }).total).toBe(count('SELECT count(*) FROM memcpys WHERE copy_kind = 2'));
    const syncs = q.search({ text: '', kinds: ['sync'] });
    expect(syncs.total).toBe(count('SELECT count(*) FROM syncs'));
    for (const it of syncs.items) expect(it.rowId).toBe(q.details(it.ref).rowId);
  });
});

describe('stats and concurrency', () => {
  it('kernel and copy totals match SQL; one row per used stream; a symmetric overlap matrix', () => {
    const s = q.stats();
    const k = one<{ n: number; t: number; mn: number; mx: number }>(
      'SELECT count(*) AS n, sum(end_ns - start_ns) AS t, min(end_ns - start_ns) AS mn, max(end_ns - start_ns) AS mx FROM kernels',
    );
    expect(s.kernels).toEqual([
      { name: kernelName, demangledName: kernelDemangled, count: k.n, totalNs: k.t, meanNs: k.t / k.n, minNs: k.mn, maxNs: k.mx, share: 1 },
    ]);
    for (const c of s.copies) {
      const kind = c.direction === 'HtoD' ? 1 : 2;
      const m = one<{ n: number; b: number; t: number }>(
        'SELECT count(*) AS n, sum(bytes) AS b, sum(end_ns - start_ns) AS t FROM memcpys WHERE copy_kind = ?',
        kind,
      );
      expect([c.count, c.bytes, c.totalNs]).toEqual([m.n, m.b, m.t]);
    }
    expect(s.streams.map((x) => x.streamId).sort()).toEqual(
      q
        .summary()
        .streams.filter((x) => x.counts.kernels + x.counts.memcpys > 0)
        .map((x) => x.id)
        .sort(),
    );
    for (const st of s.streams) {
      expect(st.utilization).toBeGreaterThan(0);
      expect(st.utilization).toBeLessThanOrEqual(1);
    }
    const m = s.overlap[0]!;
    m.overlapNs.forEach((row, i) => row.forEach((v, j) => expect(v).toBe(m.overlapNs[j]![i])));
    // Concurrent scenario: copies overlap kernels.
    expect(s.overlapFactors[0]!.all).toBeGreaterThan(1);
    expect(q.stats()).toBe(s); // cached
  });

  it('the statistics never wait for the diagnosis: its rules and what-ifs run when the findings are first read', () => {
    // A real program whose findings have what-ifs (a replay of every launch): the launch-bound loop of the corpus.
    const copy = path.join(tempDir('stats-no-diagnosis'), 'bug.sqlite');
    fs.copyFileSync(path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs/bug.sqlite'), copy);
    const rec = openRecording(copy, { readonly: true });
    try {
      const phases: string[] = [];
      const a = analyze(rec, { onProgress: (s) => phases.push(s.phase) });
      const stats = buildStats(a);
      expect(phases).not.toContain('diagnosing');
      expect(phases).not.toContain('what-if');
      expect(a.diagnosis.findings.some((f) => f.whatIf)).toBe(true);
      expect(phases).toContain('what-if');
      expect(buildStats(a)).toEqual(stats);
    } finally {
      rec.close();
    }
  });

  it('concurrency: one copy per direction at a time, kernels in flight where they ran', () => {
    const device = q.summary().devices[0]!.id;
    const gpu = one<{ s: number; e: number }>('SELECT min(start_ns) AS s, max(end_ns) AS e FROM memcpys');
    const c = q.concurrency({ deviceId: device, startNs: gpu.s, endNs: gpu.e, buckets: 200 });
    expect(Math.max(...c.h2d)).toBe(1);
    expect(Math.max(...c.d2h)).toBe(1);
    expect(Math.max(...c.kernels)).toBeGreaterThanOrEqual(1);
    expect(c.h2d.filter((x) => x > 0).length).toBeGreaterThan(100);
  });

  it('findings', () => {
    expect(q.findings().every((f) => f.severity === 'info')).toBe(true);
  });
});
