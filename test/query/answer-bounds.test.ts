// Answers bounded in size whatever is asked (issue 27, item 6): a window at
// 1 ns per pixel over 10^6 kernels ran 110 s, grew to 4.9 GB and answered
// 223 MB; stats and search of 10^6 distinct kernel names answered 169 MB and
// 115 MB. Here at the smallest size that shows each growth: a window row
// holding more operations than its share of the answer's pixels (1,024 rows
// asked share 1,048,576 px: 1,024 each), 1,500 distinct kernel names against
// the 1,000 listed, 70 streams of one device against the 64 of the overlap
// matrix. Before the bounds each answer grew with the recording: every
// kernel as an item, every name, a 70 × 70 matrix.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowId } from '../../profiler/contract/api.ts';
import { decodeWindow, encodeWindow } from '../../profiler/contract/window-codec.ts';
import { streamOverlapByDevice } from '../../profiler/analysis/stream-overlap.ts';
import { RecordingWriter } from '../../profiler/import/recording-writer.ts';
import { kernelLabels } from '../../profiler/query/kernel-labels.ts';
import { MAX_ROW_PIXELS, RecordingQuery, WINDOW_PIXELS } from '../../profiler/query/recording-query.ts';
import { MAX_SEARCH_NAMES } from '../../profiler/query/search.ts';
import { MAX_OVERLAP_STREAMS, MAX_STATS_KERNELS } from '../../profiler/query/stats.ts';
import { tempDir } from '../helpers/native.ts';

const DENSE = 5000;
const NAMES = 1500;
const SPARSE = 100;
const LONE_STREAMS = 70;

let dir: string;
let file: string;
let q: RecordingQuery;
const rowOf = new Map<number, RowId>();

beforeAll(() => {
  dir = tempDir('answer-bounds');
  file = path.join(dir, 'r.sqlite');
  const w = new RecordingWriter(file, { originNs: 0 });
  w.device(0, { name: 'g', smCount: 132, ccMajor: 9, ccMinor: 0, totalMemoryBytes: 2 ** 34 });
  const kernel = (stream: number, start: number, dur: number, name: string, correlation: number) =>
    w.kernel({ start, end: start + dur, device: 0, context: 1, stream, pid: 1, correlation, name, grid: [1, 1, 1], block: [32, 1, 1], registers: 8 });
  let corr = 1;
  // A dense stream: 5,000 kernels of 1.5 µs, 0.5 µs apart, under 1,500 names (`dense_0` ... `dense_1499`).
  w.streamFacts(0, 1, 100, 1, { flags: 1 });
  for (let i = 0; i < DENSE; i++) kernel(100, i * 2000, 1500, `dense_${i % NAMES}`, corr++);
  // A sparse one, over the same span: 100 kernels, each a 100th of it.
  w.streamFacts(0, 1, 101, 1, { flags: 1 });
  for (let i = 0; i < SPARSE; i++) kernel(101, i * 100_000, 500, 'sparse', corr++);
  // 70 streams of one kernel each, all at once.
  for (let s = 0; s < LONE_STREAMS; s++) {
    w.streamFacts(0, 1, 200 + s, 1, { flags: 1 });
    kernel(200 + s, 1000, 5000 + s, 'lone', corr++);
  }
  w.setCommand(1, 'bounds');
  w.finish({ command: 'bounds' });
  q = new RecordingQuery('b0', file);
  for (const s of q.summary().streams) rowOf.set(s.cuptiStreamId, s.rowId);
});
afterAll(() => {
  q?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const piecesOf = (r: { items: unknown[]; coverage: unknown[] }) => r.items.length + r.coverage.length;

describe('window: a row with more operations than its share of pixels is built coarser, and says so', () => {
  it('1 ns per pixel over every row the request may name: the dense row within its 1,024 px, the sparse row exact', () => {
    const s = q.summary();
    const [dense, sparse] = [rowOf.get(100)!, rowOf.get(101)!];
    // 1,024 rows asked (the most one request may name): 1,024 pixels each.
    const filler = Array.from({ length: 1022 }, (_, i) => `stream:${900_000 + i}` as RowId);
    const w = q.window({ rows: [dense, sparse, ...filler], startNs: s.startNs, endNs: s.endNs, resolutionNs: 1 });
    const share = WINDOW_PIXELS / 1024;
    const d = w.rows[0]!;
    // Before: every one of the 5,000 kernels as an item.
    expect(piecesOf(d)).toBeLessThanOrEqual(2 * (share + 1));
    expect(d.resolutionNs).toBeCloseTo((s.endNs - s.startNs) / share);
    expect(d.items.every((it) => it.endNs - it.startNs >= d.resolutionNs!)).toBe(true);
    // Nothing lost: what is not an item is counted in the coverage.
    expect(d.items.length + d.coverage.reduce((n, c) => n + c.count, 0)).toBe(DENSE);
    const p = w.rows[1]!;
    expect(p.resolutionNs).toBeUndefined();
    expect(p.items).toHaveLength(SPARSE);
    expect(w.bounded).toMatch(/^1 of 1024 row\(s\) built coarser than asked: more operations in the window than pixels/);
    // The binary answer (browser mode) carries both.
    const back = decodeWindow(encodeWindow(w));
    expect(back.bounded).toBe(w.bounded);
    expect(back.rows[0]!.resolutionNs).toBe(d.resolutionNs);
    expect(back.rows[1]!.resolutionNs).toBeUndefined();
  });

  it('a row alone at 1 ns per pixel: as asked while it holds fewer operations than MAX_ROW_PIXELS', () => {
    const s = q.summary();
    const w = q.window({ rows: [rowOf.get(100)!], startNs: s.startNs, endNs: s.endNs, resolutionNs: 1 });
    expect(DENSE).toBeLessThan(MAX_ROW_PIXELS);
    expect(w.rows[0]!.items).toHaveLength(DENSE);
    expect(w.rows[0]!.resolutionNs).toBeUndefined();
    expect(w.bounded).toBeUndefined();
  });

  it('rows asked only for a concurrency track share the pixels too', () => {
    const s = q.summary();
    const filler = Array.from({ length: 1023 }, (_, i) => `stream:${900_000 + i}` as RowId);
    const w = q.window({
      rows: [rowOf.get(100)!],
      startNs: s.startNs,
      endNs: s.endNs,
      resolutionNs: 1,
      concurrency: [{ deviceId: s.devices[0]!.id, rows: filler, buckets: 10 }],
    });
    expect(w.rows[0]!.resolutionNs).toBeDefined();
    expect(piecesOf(w.rows[0]!)).toBeLessThanOrEqual(2 * (WINDOW_PIXELS / 1024 + 1));
  });
});

describe('search: at most MAX_SEARCH_NAMES names, how many matched, the name equal to the text among them', () => {
  it('1,500 matching names: the 1,000 with the most time, and namesTotal', () => {
    const r = q.search({ text: 'dense_', limit: 10 });
    // Before: all 1,500.
    expect(r.names).toHaveLength(MAX_SEARCH_NAMES);
    expect(r.namesTotal).toBe(NAMES);
    expect(r.total).toBe(DENSE);
    const times = r.names.map((n) => n.totalNs);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // dense_0 … dense_499 ran 4 times, the others 3: the listed ones are the former and 500 of the latter.
    expect(r.names.filter((n) => n.count === 4)).toHaveLength(500);
  });

  it('a name equal to the text is listed whatever its time (the compare view aligns on it)', () => {
    const r = q.search({ text: 'dense_1499', limit: 10 });
    expect(r.names.map((n) => n.name)).toEqual(['dense_1499']);
    const all = q.search({ text: 'DENSE_1', limit: 10 });
    expect(all.namesTotal).toBeGreaterThan(MAX_SEARCH_NAMES - 500);
    expect(q.search({ text: 'dense_', limit: 1 }).names.some((n) => n.name === 'dense_1499')).toBe(false);
  });
});

describe('stats: the MAX_STATS_KERNELS kernel names with the most time, the rest summed; the overlap matrix of the busiest streams', () => {
  it('1,501 kernel names: 1,000 listed, the others in kernelsLeftOut, the totals whole', () => {
    const st = q.stats({ kind: 'whole' });
    expect(st.kernels).toHaveLength(MAX_STATS_KERNELS);
    const listed = st.kernels.reduce((n, k) => n + k.count, 0);
    expect(st.kernelsLeftOut).not.toBeNull();
    expect(st.kernelsLeftOut!.names).toBe(NAMES + 2 - MAX_STATS_KERNELS);
    expect(listed + st.kernelsLeftOut!.count).toBe(DENSE + SPARSE + LONE_STREAMS);
    const share = st.kernels.reduce((n, k) => n + k.share, 0) + st.kernelsLeftOut!.share;
    expect(share).toBeCloseTo(1, 6);
    // Most time first; none left out had more than the last listed.
    expect(st.kernels.at(-1)!.totalNs).toBeGreaterThanOrEqual(st.kernelsLeftOut!.totalNs / st.kernelsLeftOut!.names - 1e-9);
  });

  it('72 streams on one device: a 64 × 64 matrix of the busiest, the rest counted', () => {
    const st = q.stats({ kind: 'whole' });
    const m = st.overlap[0]!;
    expect(m.streamIds).toHaveLength(MAX_OVERLAP_STREAMS);
    expect(m.overlapNs).toHaveLength(MAX_OVERLAP_STREAMS);
    for (const row of m.overlapNs) expect(row).toHaveLength(MAX_OVERLAP_STREAMS);
    expect(m.streamsLeftOut).toBe(LONE_STREAMS + 2 - MAX_OVERLAP_STREAMS);
    // The dense and sparse streams are the busiest: kept.
    const ids = new Set(
      q
        .summary()
        .streams.filter((s) => s.cuptiStreamId === 100 || s.cuptiStreamId === 101)
        .map((s) => s.id),
    );
    expect(m.streamIds.filter((id) => ids.has(id))).toHaveLength(2);
    // Each kept cell is the pair's overlap as the whole matrix has it.
    const whole = streamOverlapByDevice(q.analysis({ kind: 'whole' }).trace)[0]!;
    const at = (id: number) => whole.streamIds.indexOf(id);
    m.streamIds.forEach((a, i) => m.streamIds.forEach((b, j) => expect(m.overlapNs[i]![j]).toBe(whole.overlapNs[at(a)]![at(b)])));
    expect(m.overlapNs.flat().some((ns) => ns > 0)).toBe(true);
  });
});

describe('kernelLabels: none past the most names it labels', () => {
  it('more distinct kernel names than `most`: an empty map (the timeline draws short names)', () => {
    const db = new Database(file, { readonly: true });
    try {
      expect(kernelLabels(db, 2).size).toBe(0);
      expect(kernelLabels(db).size).toBe(NAMES + 2);
    } finally {
      db.close();
    }
  });
});
