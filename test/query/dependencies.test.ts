// The API's dependencies() and waitSpans() (profiler/query/dependencies.ts)
// on the runner's events scenario, checked against SQL on the file: the
// items named as the timeline finds them (table, id, row, times), the
// record and wait calls, the hold, the spans of a window; what an API call
// or a synchronization record answers; the argument checks.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { checkArguments } from '../../profiler/query/api-args.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { startLiveFeed } from '../helpers/live-feed.ts';
import { tempDir } from '../helpers/native.ts';

const file = path.resolve(import.meta.dirname, '../fixtures/recordings/matmul-events.sqlite');
const q = new RecordingQuery('abc123', file);
const db = new Database(file, { readonly: true });
afterAll(() => {
  q.close();
  db.close();
});
const one = <T>(sql: string, ...a: unknown[]) => db.prepare(sql).get(...a) as T;

// The runner's events scenario per chunk: HtoD copies on one stream, a
// record, a wait on the compute stream, the kernel, a record, a wait on the
// DtoH stream, the copy back.
const kernels = db.prepare('SELECT id, stream_id AS stream, start_ns AS s, end_ns AS e FROM kernels ORDER BY start_ns').all() as {
  id: number;
  stream: number;
  s: number;
  e: number;
}[];
/** The cudaStreamWaitEvent before kernel k (its launch's correlation id is after it) and the cudaEventRecord of the same event. */
function callsBefore(kernelId: number): { record: number; wait: number; recordStream: number } {
  return one(
    `SELECT r.id AS record, w.id AS wait, e.stream_id AS recordStream
     FROM kernels k JOIN syncs s ON s.sync_type = 2 AND s.stream_id = k.stream_id
       AND s.correlation_id = (SELECT max(correlation_id) FROM syncs WHERE sync_type = 2 AND stream_id = k.stream_id AND correlation_id < k.correlation_id)
     JOIN api_calls w ON w.correlation_id = s.correlation_id AND w.domain = 1
     JOIN cuda_events e ON e.event_id = s.event_id AND e.correlation_id = (SELECT max(correlation_id) FROM cuda_events WHERE event_id = s.event_id AND correlation_id < s.correlation_id)
     JOIN api_calls r ON r.correlation_id = e.correlation_id AND r.domain = 1
     WHERE k.id = ?`,
    kernelId,
  );
}

describe('dependencies of a kernel', () => {
  it('what it waited for: the last copy issued to the recorded stream before the record, with both calls', () => {
    for (const k of kernels) {
      const d = q.dependencies({ table: 'kernels', id: k.id });
      const calls = callsBefore(k.id);
      const awaited = one<{ id: number; s: number; e: number }>(
        `SELECT m.id, m.start_ns AS s, m.end_ns AS e FROM memcpys m WHERE m.stream_id = ? AND m.correlation_id < (SELECT correlation_id FROM api_calls WHERE id = ?)
         ORDER BY m.correlation_id DESC LIMIT 1`,
        calls.recordStream,
        calls.record,
      );
      expect(d.waitedFor).toHaveLength(1);
      const dep = d.waitedFor[0]!;
      expect(dep).toMatchObject({
        kind: 'event',
        from: { ref: { table: 'memcpys', id: awaited.id }, kind: 'memcpy-h2d', rowId: `stream:${calls.recordStream}`, startNs: awaited.s, endNs: awaited.e },
        to: { ref: { table: 'kernels', id: k.id }, kind: 'kernel', rowId: `stream:${k.stream}`, startNs: k.s, endNs: k.e },
        record: { ref: { table: 'api_calls', id: calls.record }, name: 'cudaEventRecord' },
        wait: { ref: { table: 'api_calls', id: calls.wait }, name: 'cudaStreamWaitEvent' },
      });
      expect(dep.to.name).toContain('matmul');
      // The hold is the hatched span of the same wait, ending when the copy did.
      if (dep.waitNs! > 0)
        expect(d.hold).toEqual({ rowId: `stream:${k.stream}`, startNs: awaited.e - dep.waitNs!, endNs: awaited.e, waiting: dep.to.ref, awaited: dep.from.ref });
      else expect(d.hold).toBeNull();
      // What waited for it: the copy back, on the DtoH stream.
      expect(d.waitedBy.map((x) => [x.kind, x.to.kind])).toEqual([['event', 'memcpy-d2h']]);
      // Its chain starts at one of its dependencies and ends at a host call.
      expect(d.chainComplete).toBe(true);
      expect(d.chain[0]!.to.ref).toEqual({ table: 'kernels', id: k.id });
      expect(d.chain.at(-1)).toMatchObject({ kind: 'launch', from: { kind: 'api', rowId: expect.stringMatching(/^api:/) } });
    }
  });

  it('the wait spans of a window: each kernel held, on its stream row, none shorter than the resolution', () => {
    const rows = q.summary().streams.map((s) => s.rowId);
    const all = q.waitSpans({ rows, startNs: 0, endNs: 1e15, resolutionNs: 1 });
    expect(all.any).toBe(true);
    const held = kernels.map((k) => q.dependencies({ table: 'kernels', id: k.id }).hold).filter((h) => h !== null);
    expect(held.length).toBeGreaterThan(2);
    for (const h of held) expect(all.spans).toContainEqual(h);
    // A window around one span holds it; a coarse resolution drops what would be under a pixel.
    const h = held[0]!;
    expect(q.waitSpans({ rows: [h.rowId], startNs: h.startNs + 1, endNs: h.startNs + 2, resolutionNs: 1 }).spans).toEqual([h]);
    expect(q.waitSpans({ rows: ['stream:999'], startNs: h.startNs, endNs: h.endNs, resolutionNs: 1 }).spans).toEqual([]);
    const coarse = q.waitSpans({ rows, startNs: 0, endNs: 1e15, resolutionNs: 20_000 });
    expect(coarse.spans.every((s) => s.endNs - s.startNs >= 20_000)).toBe(true);
    expect(coarse.spans.length).toBeLessThan(all.spans.length);
  });
});

describe('dependencies of other items', () => {
  it('a cudaStreamWaitEvent call, and the synchronization record CUPTI made of it: the wait it took part in', () => {
    const k = kernels[3]!;
    const calls = callsBefore(k.id);
    const sync = one<{ id: number }>('SELECT s.id FROM syncs s JOIN api_calls c ON c.correlation_id = s.correlation_id WHERE c.id = ?', calls.wait);
    for (const ref of [
      { table: 'api_calls' as const, id: calls.wait },
      { table: 'api_calls' as const, id: calls.record },
      { table: 'syncs' as const, id: sync.id },
    ]) {
      const d = q.dependencies(ref);
      expect(d.through.map((x) => x.to.ref)).toEqual([{ table: 'kernels', id: k.id }]);
      expect(d.chain).toEqual([]);
    }
    // A launch call waits for nothing and nothing waits for it here (its arrow is details()' launch).
    const launch = one<{ id: number }>(
      'SELECT c.id FROM api_calls c JOIN kernels k ON k.correlation_id = c.correlation_id WHERE k.id = ? AND c.domain = 1',
      k.id,
    );
    expect(q.dependencies({ table: 'api_calls', id: launch.id })).toMatchObject({ waitedFor: [], waitedBy: [], through: [] });
  });

  it('an item that is not there is not-found; the arguments are checked', () => {
    expect(() => q.dependencies({ table: 'kernels', id: 99_999 })).toThrow(/kernels 99999: no such item/);
    expect(() => checkArguments('waitSpans', ['a1', { rows: ['stream:1'], startNs: 5, endNs: 1, resolutionNs: 1 }])).toThrow(
      'waitSpans: request.endNs must not be before startNs',
    );
    expect(() => checkArguments('dependencies', ['a1', { table: 'strings', id: 1 }])).toThrow(/dependencies: ref.table must be one of/);
  });
});

// A recording still being written (issue 14's live view): the dependency
// index follows its revisions. A real PyTorch record stream from an H100
// (test/fixtures/streams) is appended in pieces to the recorder's ingest.
describe('dependencies of a growing recording', () => {
  it('a kernel that arrived after the index was first built has its chain once it is in', async () => {
    const dir = tempDir('deps-live');
    const out = path.join(dir, 'live.sqlite');
    const stream = path.resolve(import.meta.dirname, '../fixtures/streams/torch_streams-h100.ssr');
    const feed = await startLiveFeed({ stream, out, chunks: 8, intervalMs: 700, startDelayMs: 500 });
    const live = new RecordingQuery('live01', out);
    try {
      const newest = () => {
        const f = new Database(out, { readonly: true, timeout: 5000 });
        try {
          return (f.prepare('SELECT max(id) FROM kernels').pluck().get() as number | null) ?? 0;
        } finally {
          f.close();
        }
      };
      // Some kernels in, not all: the index is built on this revision.
      while (live.recordingState().counts.kernels === 0 || feed.chunks() < 3) await new Promise((r) => setTimeout(r, 200));
      const early = newest();
      expect(live.dependencies({ table: 'kernels', id: early }).chain.length).toBeGreaterThan(0);
      await feed.done;
      while (live.recordingState().live) await new Promise((r) => setTimeout(r, 200));
      const last = newest();
      expect(last).toBeGreaterThan(early);
      expect(live.dependencies({ table: 'kernels', id: last }).chain.length).toBeGreaterThan(0);
    } finally {
      feed.stop();
      live.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
