// Importers on real files: PyTorch profiler (Kineto) traces from the H100,
// and StreamScope's own export read back (round trip), stream waits included
// (test/import/kineto-sync.test.ts: the H200 traces' synchronizations).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { dependenciesOf } from '../../profiler/analysis/replay/dependencies.ts';
import { loadHost } from '../../profiler/analysis/host.ts';
import { loadTrace } from '../../profiler/analysis/trace.ts';
import { importTrace } from '../../profiler/import/index.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const root = path.resolve(import.meta.dirname, '../..');
const recordings = path.join(root, 'test/fixtures/recordings');
const ownKineto = path.join(root, 'test/fixtures/kineto/torch_streams_h100.json');
// Copied unchanged from ../shared/fixtures/kineto/ (see test/fixtures/kineto/PROVENANCE.md).
const sharedKineto = path.join(root, 'test/fixtures/kineto/torch_add_loop_h100.json');
const cli = path.join(root, 'profiler/cli/streamscope.ts');
const dir = tempDir('import');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const count = (file: string, table: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
};
const kernelNames = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT s.value AS name, count(*) AS n FROM kernels k JOIN strings s ON s.id = k.name_id GROUP BY 1 ORDER BY 1').all();
  } finally {
    db.close();
  }
};

describe('PyTorch profiler (Kineto) traces', () => {
  it("torch.profiler's trace of torch_streams.py: the kernels and copies StreamScope recorded from the same program", async () => {
    const out = path.join(dir, 'torch.sqlite');
    const r = await importTrace(ownKineto, out);
    expect(r.format).toBe('kineto');
    const recorded = path.join(recordings, 'torch_streams.sqlite');
    expect(count(out, 'kernels')).toBe(count(recorded, 'kernels'));
    expect(count(out, 'memcpys')).toBe(count(recorded, 'memcpys'));
    // Kineto demangles kernel names, CUPTI does not: compare how many of each.
    const shape = (f: string) => (kernelNames(f) as { n: number }[]).map((k) => k.n).sort((a, b) => a - b);
    expect(shape(out)).toEqual(shape(recorded));
    // The app and the diagnosis work on it unchanged: every GPU op finds its launch.
    const db = openRecording(out, { readonly: true });
    const trace = loadTrace(db);
    const host = loadHost(db, trace.ops);
    db.close();
    expect(Array.from(host.opCall).filter((k) => k < 0)).toEqual([]);
    expect(trace.devices[0]).toMatchObject({ name: 'NVIDIA H100 80GB HBM3', smCount: 132, ccMajor: 9 });
  });

  it('the shared add-loop trace: 2,000 kernels, 2,002 runtime calls, each kernel joined to its launch', async () => {
    const out = path.join(dir, 'add.sqlite');
    const r = await importTrace(sharedKineto, out);
    expect(r.counts).toMatchObject({ kernels: 2000, apiCalls: 2002 });
    const db = openRecording(out, { readonly: true });
    const trace = loadTrace(db);
    const host = loadHost(db, trace.ops);
    db.close();
    expect(Array.from(host.opCall).every((k) => k >= 0)).toBe(true);
  });
});

describe('round trip: export → import', () => {
  it('keeps every op, call and range with its duration and timing', async () => {
    const src = path.join(recordings, 'normalise-concurrent.sqlite');
    const json = path.join(dir, 'rt.json');
    expect(spawnSync(process.execPath, [cli, 'export', src, '-o', json]).status).toBe(0);
    const out = path.join(dir, 'rt.sqlite');
    await importTrace(json, out);
    for (const t of ['kernels', 'memcpys', 'memsets', 'api_calls', 'nvtx_ranges', 'syncs']) expect(count(out, t), t).toBe(count(src, t));
    const rows = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        const k = db.prepare('SELECT start_ns, end_ns FROM kernels ORDER BY start_ns').all() as { start_ns: number; end_ns: number }[];
        return k.map((r) => [r.start_ns - k[0]!.start_ns, r.end_ns - r.start_ns]);
      } finally {
        db.close();
      }
    };
    expect(rows(out)).toEqual(rows(src));
    // Kernel names travel as stored (mangled); the importers' writer demangles them as the ingest did.
    const names = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return db.prepare('SELECT DISTINCT s.value, s.demangled FROM kernels k JOIN strings s ON s.id = k.name_id ORDER BY 1').all();
      } finally {
        db.close();
      }
    };
    expect(names(out)).toEqual(names(src));
    expect(names(out)).toEqual([
      { value: expect.stringMatching(/^_ZN6runner/), demangled: 'runner::(anonymous namespace)::normaliseColumns(double const*, double*, int)' },
    ]);
  });
});

describe("round trip: a recording's stream waits, as Kineto's cuda_sync events", () => {
  it("matmul's events scenario: the same synchronizations, records and event edges as the collector's rows", async () => {
    const src = path.join(recordings, 'matmul-events.sqlite');
    const json = path.join(dir, 'events.json');
    expect(spawnSync(process.execPath, [cli, 'export', src, '-o', json]).status).toBe(0);
    const out = path.join(dir, 'events.sqlite');
    await importTrace(json, out);
    const rows = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return {
          syncs: db.prepare('SELECT sync_type, event_id, correlation_id FROM syncs ORDER BY correlation_id, sync_type').all(),
          records: db.prepare('SELECT event_id, correlation_id FROM cuda_events ORDER BY correlation_id').all(),
        };
      } finally {
        db.close();
      }
    };
    expect(rows(out)).toEqual(rows(src));
    const edges = (file: string) => {
      const db = openRecording(file, { readonly: true });
      try {
        const trace = loadTrace(db);
        const d = dependenciesOf(trace, loadHost(db, trace.ops));
        return [...d.waitFrom.keys()].map((j) => [trace.ops.correlation[d.waitFrom[j]!], trace.ops.correlation[d.waitTo[j]!]]);
      } finally {
        db.close();
      }
    };
    expect(edges(out)).toHaveLength(16);
    expect(edges(out)).toEqual(edges(src));
  });
});

describe('bad input', () => {
  it('names the file and the problem, and leaves an existing output untouched', () => {
    const existing = path.join(dir, 'keep.sqlite');
    fs.copyFileSync(path.join(recordings, 'normalise-serial.sqlite'), existing);
    const before = fs.readFileSync(existing);
    const truncated = path.join(dir, 'truncated.json');
    fs.writeFileSync(truncated, '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": 2}, {"ph": "X", "ts": 3,');
    const r = spawnSync(process.execPath, [cli, 'import', truncated, '-o', existing, '--force'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${truncated}: truncated JSON`);
    expect(fs.readFileSync(existing).equals(before)).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.writing'))).toEqual([]);

    const broken = path.join(dir, 'broken.json');
    fs.writeFileSync(broken, '{"traceEvents": [{"ph": "X", "ts": 1,}]}');
    const b = spawnSync(process.execPath, [cli, 'import', broken, '-o', path.join(dir, 'b.sqlite')], { encoding: 'utf8' });
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(new RegExp(`${broken}: malformed JSON`));

    const notTrace = path.join(dir, 'notes.txt');
    fs.writeFileSync(notTrace, 'hello');
    const n = spawnSync(process.execPath, [cli, 'import', notTrace, '-o', path.join(dir, 'n.sqlite')], { encoding: 'utf8' });
    expect(n.status).toBe(2);
    expect(n.stderr).toContain(`${notTrace}: not a trace StreamScope can import`);
  });
});

describe('Nsight Systems SQLite export (real file: A100, Nsight Systems 2022.2)', () => {
  const nsys = path.join(root, 'test/fixtures/nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite');

  it('imports every kernel, copy, runtime call and NVTX range, with devices and the legacy default stream', async () => {
    const out = path.join(dir, 'nsys.sqlite');
    const r = await importTrace(nsys, out);
    expect(r.format).toBe('nsys');
    const src = new Database(nsys, { readonly: true });
    const n = (sql: string) => (src.prepare(sql).get() as { n: number }).n;
    expect(count(out, 'kernels')).toBe(n('SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL'));
    expect(count(out, 'memcpys')).toBe(n('SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_MEMCPY'));
    expect(count(out, 'api_calls')).toBe(n('SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_RUNTIME'));
    expect(count(out, 'nvtx_ranges')).toBe(n('SELECT count(*) AS n FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60)'));
    const firstKernel = src.prepare('SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1').get() as { start: number; end: number };
    src.close();
    const db = new Database(out, { readonly: true });
    expect(db.prepare('SELECT start_ns, end_ns FROM kernels ORDER BY start_ns LIMIT 1').get()).toEqual({
      start_ns: firstKernel.start,
      end_ns: firstKernel.end,
    });
    expect(db.prepare('SELECT name, sm_count AS sms FROM devices').all()).toEqual([{ name: 'NVIDIA A100-SXM4-40GB', sms: 108 }]);
    expect(db.prepare('SELECT copy_kind, src_kind, dst_kind, count(*) AS n FROM memcpys GROUP BY 1, 2, 3 ORDER BY 1').all()).toEqual([
      { copy_kind: 1, src_kind: 1, dst_kind: 3, n: 10 },
      { copy_kind: 2, src_kind: 3, dst_kind: 1, n: 5 },
    ]); // pageable ↔ device
    expect((db.prepare('SELECT flags FROM streams s JOIN kernels k ON k.stream_id = s.id LIMIT 1').get() as { flags: number }).flags & 1).toBe(1);
    db.close();
    // The diagnosis reads it like a recording: everything on one stream, synchronous pageable copies.
    const rec = openRecording(out, { readonly: true });
    const trace = loadTrace(rec);
    const host = loadHost(rec, trace.ops);
    rec.close();
    expect(Array.from(host.opCall).every((k) => k >= 0)).toBe(true);
  });

  it('refuses a SQLite file that is not an Nsight export, naming it', async () => {
    await expect(importTrace(path.join(recordings, 'normalise-serial.sqlite'), path.join(dir, 'x.sqlite'))).rejects.toThrow(
      /normalise-serial\.sqlite: not an Nsight Systems SQLite export/,
    );
  });
});
