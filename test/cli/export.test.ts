// `streamscope export`: Chrome trace JSON that Perfetto UI and
// chrome://tracing open, checked event by event against the recording.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/native.ts';

const cli = path.resolve(import.meta.dirname, '../../profiler/cli/streamscope.ts');
const fixture = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-default-stream.sqlite');
const dir = tempDir('export');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface TraceEvent {
  ph: string;
  cat?: string;
  name: string;
  pid: number;
  tid?: number;
  ts?: number;
  dur?: number;
  id?: string;
  args?: Record<string, unknown>;
}

describe('streamscope export', () => {
  it('writes every op, API call and NVTX range, streams as threads of their device, with launch flows', () => {
    const out = path.join(dir, 'trace.json');
    const r = spawnSync(process.execPath, [cli, 'export', fixture, '-o', out], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const events = (JSON.parse(fs.readFileSync(out, 'utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
    const db = new Database(fixture, { readonly: true });
    const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const of = (ph: string, cat: string) => events.filter((e) => e.ph === ph && e.cat === cat);
    expect(of('X', 'kernel')).toHaveLength(n('SELECT count(*) AS n FROM kernels'));
    expect(of('X', 'gpu_memcpy')).toHaveLength(n('SELECT count(*) AS n FROM memcpys'));
    expect(of('X', 'cuda_runtime').length + of('X', 'cuda_driver').length).toBe(n('SELECT count(*) AS n FROM api_calls'));
    expect(of('X', 'nvtx').length + events.filter((e) => e.ph === 'i' && e.cat === 'nvtx').length).toBe(n('SELECT count(*) AS n FROM nvtx_ranges'));
    // Each stream is a named thread of its device's process, and every op sits on one.
    const threads = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => `${e.pid}/${e.tid}`));
    expect(threads.size).toBe(n('SELECT count(*) AS n FROM streams'));
    for (const e of of('X', 'kernel')) expect(threads.has(`${e.pid}/${e.tid}`)).toBe(true);
    // Kernel durations are the stored ones (µs in the trace).
    const first = db.prepare('SELECT start_ns, end_ns FROM kernels ORDER BY start_ns LIMIT 1').get() as { start_ns: number; end_ns: number };
    const k0 = of('X', 'kernel').sort((a, b) => a.ts! - b.ts!)[0]!;
    expect(k0.ts).toBeCloseTo(first.start_ns / 1000, 6);
    expect(k0.dur).toBeCloseTo((first.end_ns - first.start_ns) / 1000, 6);
    // Flows: one start per op at its launching call, one end per op, matched by id.
    const starts = new Map(of('s', 'launch').map((e) => [e.id, e]));
    const ends = of('f', 'launch');
    expect(ends).toHaveLength(n('SELECT count(*) AS n FROM kernels') + n('SELECT count(*) AS n FROM memcpys') + n('SELECT count(*) AS n FROM memsets'));
    for (const f of ends) expect(starts.has(f.id)).toBe(true);
    db.close();
  });

  it('names the problem for a bad input or output', () => {
    const bad = spawnSync(process.execPath, [cli, 'export', '/nonexistent/r.sqlite', '-o', path.join(dir, 'x.json')], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('/nonexistent/r.sqlite: no such file');
    const unwritable = spawnSync(process.execPath, [cli, 'export', fixture, '-o', '/nonexistent-dir/x.json'], { encoding: 'utf8' });
    expect(unwritable.status).toBe(1);
    expect(unwritable.stderr).toContain('/nonexistent-dir/x.json: cannot create: no such directory /nonexistent-dir');
  });
});

// CUDA graph launches, on a real recording:
// PyTorch 2.11 on an H200, a small network captured once with
// torch.cuda.graph and replayed 300 times, one cudaGraphLaunch for 40
// kernels (test/fixtures/corpus/torch-launch-bound-graphs/fix.sqlite).
// Each kernel keeps its graph's and node's ids in its args, and every one
// of a launch's 40 kernels ends a flow of its own that starts at the launch
// call (chrome://tracing ends a flow at its first end: one shared flow
// would draw one arrow of forty).
const graphFixture = path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs/fix.sqlite');

describe('streamscope export: CUDA graph launches', () => {
  it("keeps each graph kernel's graph and node ids, and draws a flow from its cudaGraphLaunch to each of the launch's kernels", () => {
    const out = path.join(dir, 'graph-trace.json');
    const r = spawnSync(process.execPath, [cli, 'export', graphFixture, '-o', out], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const events = (JSON.parse(fs.readFileSync(out, 'utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
    const db = new Database(graphFixture, { readonly: true });
    const rows = db
      .prepare(
        `SELECT k.start_ns AS start, k.correlation_id AS corr, k.graph_id AS graph, k.graph_node_id AS node, a.start_ns AS call, a.tid
         FROM kernels k JOIN contexts c ON c.id = k.context_id JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = k.correlation_id
         WHERE k.graph_id IS NOT NULL ORDER BY k.start_ns`,
      )
      .all() as { start: number; corr: number; graph: number; node: number; call: number; tid: number }[];
    const plain = db.prepare('SELECT count(*) FROM kernels WHERE graph_id IS NULL').pluck().get() as number;
    db.close();
    expect(rows).toHaveLength(12_000);

    const kernels = events.filter((e) => e.ph === 'X' && e.cat === 'kernel');
    const graphKernels = kernels.filter((e) => e.args!['graph id'] !== undefined).sort((a, b) => a.ts! - b.ts!);
    expect(graphKernels).toHaveLength(12_000);
    // The others carry no graph args at all.
    expect(kernels.length - graphKernels.length).toBe(plain);
    graphKernels.forEach((e, j) => {
      expect(e.ts).toBeCloseTo(rows[j]!.start / 1000, 6);
      expect(e.args).toMatchObject({ correlation: rows[j]!.corr, 'graph id': rows[j]!.graph, 'graph node id': rows[j]!.node });
    });

    // Flows: each 'f' has its own id and its 's' at the launch call, on the call's thread, at the call's start.
    const starts = new Map(events.filter((e) => e.ph === 's' && e.cat === 'launch').map((e) => [e.id!, e]));
    const ends = events.filter((e) => e.ph === 'f' && e.cat === 'launch');
    expect(new Set(ends.map((e) => e.id)).size).toBe(ends.length);
    const byTs = new Map(rows.map((r) => [r.start, r]));
    let graphFlows = 0;
    for (const f of ends) {
      const s = starts.get(f.id!);
      expect(s, f.id).toBeDefined();
      const k = byTs.get(Math.round(f.ts! * 1000));
      if (!k) continue;
      graphFlows++;
      expect(s!.ts).toBeCloseTo(k.call / 1000, 6);
      expect(s!.tid).toBe(k.tid);
    }
    expect(graphFlows).toBe(12_000);
    // One launch: 40 flows out of its call, the first with the plain pid:correlation id, the others numbered.
    const corr = rows[0]!.corr;
    const ids = ends.map((e) => e.id!).filter((id) => id.split(':')[1] === String(corr));
    expect(ids).toHaveLength(40);
    expect(ids[0]).toMatch(new RegExp(`^\\d+:${corr}$`));
    expect(ids.slice(1)).toEqual(Array.from({ length: 39 }, (_, j) => `${ids[0]}:${j + 1}`));
  });
});
