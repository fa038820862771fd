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
    expect(unwritable.stderr).toContain('/nonexistent-dir/x.json: cannot write');
  });
});
