// A window scope analyses what runs in it, clipped to it (analysis/scope.ts
// clipToWindow), on a real recording: runner-pageable's bug copies 64 MiB
// from the device to pageable memory in ~50 ms at a time, so a window inside
// one copy holds no operation that starts in it, only that copy running.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { buildStats } from '../../profiler/query/stats.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { clipToWindow } from '../../profiler/analysis/scope.ts';
import type { TimelineColumns } from '../../profiler/native/columns.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { openRecording } from '../../profiler/store/database.ts';

const file = path.join(repoRoot, 'test/fixtures/corpus/runner-pageable/bug.sqlite');

function analysed(scope: Scope): Analysis {
  const db = openRecording(file, { readonly: true });
  try {
    return analyze(db, { scope });
  } finally {
    db.close();
  }
}

function rows<T>(query: string, ...params: unknown[]): T[] {
  const db = openRecording(file, { readonly: true });
  try {
    return db.prepare(query).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** The longest copy of the recording: a pageable one (asserted below), and a window of 30 ms inside it. */
const [copy] = rows<{ id: number; start: number; end: number; bytes: number; src: number; dst: number }>(
  'SELECT id, start_ns AS start, end_ns AS end, bytes, src_kind AS src, dst_kind AS dst FROM memcpys ORDER BY end_ns - start_ns DESC LIMIT 1',
);
const inside = { kind: 'window', startNs: copy!.start + 5e6, endNs: copy!.start + 35e6 } as const;

describe('a window inside a long pageable copy (runner-pageable)', () => {
  it('holds that copy, clipped to the window: its time is the window, its bytes pro rata, its bandwidth the measured one', () => {
    expect(copy!.end - copy!.start).toBeGreaterThan(40e6);
    expect(copy!.dst).toBe(1); // pageable
    // Nothing starts in the window: the old rule left it empty.
    const starting = rows<{ n: number }>(
      `SELECT (SELECT count(*) FROM kernels WHERE start_ns >= @from AND start_ns < @to)
        + (SELECT count(*) FROM memcpys WHERE start_ns >= @from AND start_ns < @to) AS n`,
      { from: inside.startNs, to: inside.endNs },
    )[0]!.n;
    expect(starting).toBe(0);

    const a = analysed(inside);
    expect(a.trace.ops.length).toBe(1);
    expect(a.trace.ops.rowId[0]).toBe(copy!.id);
    const stats = buildStats(a);
    expect(stats.kernels).toEqual([]);
    expect(stats.copies).toHaveLength(1);
    const c = stats.copies[0]!;
    expect([c.direction, c.srcKind, c.dstKind, c.count]).toEqual(['DtoH', 'device', 'pageable', 1]);
    expect(c.totalNs).toBe(30e6);
    expect(c.bytes).toBe(Math.round((copy!.bytes * 30e6) / (copy!.end - copy!.start)));
    expect(c.gbPerS).toBeCloseTo(copy!.bytes / (copy!.end - copy!.start), 3);
    // The stream ran it the whole window.
    expect(stats.streams).toHaveLength(1);
    expect(stats.streams[0]!.busyNs).toBe(30e6);
    expect(stats.streams[0]!.copies).toBe(1);
    // The scope says what it cut.
    expect(a.scope.notes).toEqual([expect.stringMatching(/^1 operation ran across its edges \(49\.\d ms of GPU time, 30\.0 ms of it inside\)/)]);
  });

  it('finds the copy pageable, names it, and its fix saves most of the window', () => {
    const a = analysed(inside);
    const [f] = a.diagnosis.findings;
    expect(f?.kind).toBe('pageable-async-copy');
    expect(f!.evidence.memcpys).toEqual([copy!.id]);
    // The call that issued it started before the window: still its launch, clipped (the host sits in it all window).
    const [call] = rows<{ id: number; start: number; end: number }>(
      "SELECT a.id, a.start_ns AS start, a.end_ns AS end FROM api_calls a JOIN memcpys m ON m.correlation_id = a.correlation_id AND m.id = ? JOIN strings s ON s.id = a.name_id WHERE s.value LIKE 'cudaMemcpy%'",
      copy!.id,
    );
    expect(call!.start).toBeLessThan(inside.startNs);
    expect(f!.evidence.apiCalls).toEqual([call!.id]);
    expect(f!.evidence.window).toEqual({ start: copy!.start + 5e6, end: copy!.start + 35e6 });
    expect(f!.whatIf?.measuredNs).toBe(30e6);
    expect(f!.whatIf!.predictedNs).toBeLessThan(5e6);
    expect(f!.costNs).toBeGreaterThan(25e6);
  });

  it('a window from inside the copy on holds the copy clipped and every operation that starts later, unclipped', () => {
    const from = copy!.start + 5e6;
    const a = analysed({ kind: 'window', startNs: from, endNs: Number.MAX_SAFE_INTEGER });
    const running = rows<{ n: number }>(
      `SELECT (SELECT count(*) FROM kernels WHERE end_ns > @from) + (SELECT count(*) FROM memcpys WHERE end_ns > @from)
        + (SELECT count(*) FROM memsets WHERE end_ns > @from) AS n`,
      { from },
    )[0]!.n;
    expect(a.trace.ops.length).toBe(running);
    // Start order, the clipped copy first.
    expect(a.trace.ops.start[0]).toBe(from);
    for (let i = 1; i < a.trace.ops.length; i++) expect(a.trace.ops.start[i]).toBeGreaterThanOrEqual(a.trace.ops.start[i - 1]!);
    expect(a.scope.notes?.[0]).toMatch(/^1 operation ran across its edges/);
    // The API calls too: every one still running at `from`, none before it.
    const calls = rows<{ n: number }>('SELECT count(*) AS n FROM api_calls WHERE end_ns > ?', from)[0]!.n;
    expect(a.host.calls.length).toBe(calls);
    expect(Math.min(...a.host.calls.start)).toBe(from);
  });

  it('a window that cuts nothing is views of the loaded columns, as before', () => {
    const whole = analysed({ kind: 'whole' });
    const after = { kind: 'window', startNs: copy!.end, endNs: whole.trace.span.end + 1 } as const;
    const db = openRecording(file, { readonly: true });
    try {
      const a = analyze(db, { scope: after, columns: whole.columns });
      // Nothing runs across `copy.end` in this serial program: no copy was made, and no note.
      expect(a.trace.ops.start.buffer).toBe(whole.columns.ops.start.buffer);
      expect(a.scope.notes).toBeUndefined();
    } finally {
      db.close();
    }
  });
});

describe('clipToWindow on columns built by hand', () => {
  /** Ops in start order ([start, end)), bytes 100 each, row ids from 1; no calls. */
  function columns(spans: [number, number][]): TimelineColumns {
    const n = spans.length;
    const ops = {
      length: n,
      start: Float64Array.from(spans, (s) => s[0]),
      end: Float64Array.from(spans, (s) => s[1]),
      bytes: new Float64Array(n).fill(100),
      rowId: Float64Array.from(spans, (_, i) => i + 1),
    };
    return { ops, calls: { length: 0, start: new Float64Array(0), end: new Float64Array(0), rowId: new Float64Array(0) } } as unknown as TimelineColumns;
  }

  it('keeps the ops in flight at the window’s start just before the rest as views, the clipped columns copied, the input untouched', () => {
    // Ops 1 and 2 still run at 50 (op 0 ended); 3 runs past 100.
    const c = columns([
      [0, 10],
      [20, 60],
      [30, 70],
      [55, 120],
      [80, 90],
    ]);
    const { columns: w, clipped } = clipToWindow(c, 50, 100);
    expect([...w.ops.rowId]).toEqual([2, 3, 4, 5]);
    expect([...w.ops.start]).toEqual([50, 50, 55, 80]);
    expect([...w.ops.end]).toEqual([60, 70, 100, 90]);
    expect([...w.ops.bytes]).toEqual([25, 50, 69, 100]); // pro rata: 10/40, 20/40, 45/65 of 100, rounded
    expect(clipped).toEqual({ ops: 3, ns: 40 + 40 + 65, keptNs: 10 + 20 + 45 });
    // The columns not clipped are the input's (no copy); the clipped ones are copies: the input is as it was.
    expect(w.ops.rowId.buffer).toBe(c.ops.rowId.buffer);
    expect(w.ops.start.buffer).not.toBe(c.ops.start.buffer);
    expect([...c.ops.start]).toEqual([0, 20, 30, 55, 80]);
    expect([...c.ops.bytes]).toEqual([100, 100, 100, 100, 100]);
  });

  it('copies every column where an op that ended before the window sits between those in flight and the rest', () => {
    // Op 0 still runs at 50; op 1 ended before it.
    const c = columns([
      [0, 60],
      [20, 30],
      [55, 70],
    ]);
    const { columns: w } = clipToWindow(c, 50, 100);
    expect([...w.ops.rowId]).toEqual([1, 3]);
    expect([...w.ops.start]).toEqual([50, 55]);
    expect([...w.ops.end]).toEqual([60, 70]);
    expect(w.ops.rowId.buffer).not.toBe(c.ops.rowId.buffer);
  });
});
