// The native addon on this machine (no GPU, no driver): the device
// inventory answers without throwing, CUPTI is found, and the native ingest
// stores exactly what the C++ encoder wrote — incrementally, across
// processes, and without losing anything when the input is cut or broken.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cuptiInfo, devices, Ingest } from '../../profiler/native/addon.ts';
import { cuptiLibraryPath } from '../../profiler/native/paths.ts';
import { createRecording } from '../../profiler/store/database.ts';
import { Kind } from '../../profiler/record/format.ts';
import { syntheticStream, tempDir } from '../helpers/native.ts';
import { zonesWrittenAndRecomputed } from '../helpers/zones.ts';

let dir: string;
beforeAll(() => {
  dir = tempDir('addon');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Expectation {
  header: { origin_ns: string; pid: number };
  records: ({ kind: string } & Record<string, number | string>)[];
}

function newRecording(name: string): string {
  const file = path.join(dir, `${name}.sqlite`);
  createRecording(file, { overwrite: true }).close();
  return file;
}
function byCorrelation<T extends Record<string, unknown>>(records: T[]): T[] {
  return [...records].sort((a, b) => (a.correlation_id as number) - (b.correlation_id as number));
}

function rows<T>(file: string, sql: string): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

describe('devices() and cuptiInfo()', () => {
  it('answers with an empty list and a reason where there is no driver', () => {
    const inv = devices();
    if (inv.devices.length === 0) {
      expect(inv.error).toMatch(/driver|cuInit|no CUDA devices/);
    } else {
      expect(inv.devices[0]!.uuid).toMatch(/^GPU-[0-9a-f]{8}-/);
    }
  });

  it("finds the toolkit's CUPTI and reports its version; a wrong path is an error, not a crash", () => {
    const lib = cuptiLibraryPath();
    expect(lib).not.toBeNull();
    const info = cuptiInfo(lib!);
    expect(info.error).toBeNull();
    expect(info.version).toBeGreaterThanOrEqual(130001);
    const missing = cuptiInfo(path.join(dir, 'libcupti-nope.so'));
    expect(missing.version).toBeNull();
    expect(missing.error).toContain('CUPTI cannot be loaded');
  });
});

describe('native ingest', () => {
  let stream: string;
  let expected: Expectation;
  beforeAll(() => {
    const s = syntheticStream(dir, 'all');
    stream = s.stream;
    expected = JSON.parse(fs.readFileSync(s.expect, 'utf8')) as Expectation;
  });

  const origin = () => BigInt(expected.header.origin_ns);
  const ofKind = (k: string) => expected.records.filter((r) => r.kind === k);
  const str = (id: number) => ofKind('String').find((s) => s.id === id)?.value as string | undefined;

  it('stores every kernel, copy, memset and API call exactly, times relative to the origin', async () => {
    const file = newRecording('exact');
    const ingest = new Ingest(file, { originNs: origin() });
    const p = await ingest.ingestFile(stream, { final: true });
    await ingest.finish();
    expect(p).toMatchObject({ complete: true, pid: 4242, truncated: null });
    expect(p.records).toBe(expected.records.length);
    // The ingest's kind names (native/addon/src/record_decoding.cc) are the format's (profiler/record/format.ts):
    // the recorder reads them back (lastKind 'Flush' after a signal, 'End').
    expect(Object.keys(p.recordsByKind).sort()).toEqual(Object.keys(Kind).sort());
    expect(p.lastKind).toBe('End');
    expect(rows<{ source: number; count: number }>(file, 'SELECT source, count FROM dropped_records ORDER BY id')).toEqual(
      ofKind('Dropped').map((d) => ({ source: d.source, count: d.count })),
    );

    const kernels = rows<Record<string, number | string>>(
      file,
      `SELECT k.*, s.value AS name, st.cupti_stream_id FROM kernels k
        JOIN strings s ON s.id = k.name_id JOIN streams st ON st.id = k.stream_id ORDER BY k.correlation_id`,
    );
    // Rows go in grouped by stream (zones), so compare in correlation order.
    const want = byCorrelation(ofKind('Kernel'));
    expect(kernels.length).toBe(want.length);
    kernels.forEach((k, i) => {
      const w = want[i]!;
      expect(k).toMatchObject({
        start_ns: w.start_ns,
        end_ns: w.end_ns,
        correlation_id: w.correlation_id,
        grid_x: w.grid_x,
        block_x: w.block_x,
        registers_per_thread: w.registers_per_thread,
        static_shared_bytes: w.static_shared_bytes,
        launch_type: w.launch_type,
        cluster_y: w.cluster_y,
        channel_id: w.channel_id,
        cupti_stream_id: w.stream_id,
        name: str(w.name_sid as number),
      });
    });
    const copies = rows<Record<string, number>>(file, 'SELECT * FROM memcpys ORDER BY correlation_id');
    expect(copies.map((c) => [c.bytes, c.copy_kind, c.src_kind, c.dst_kind, c.is_async])).toEqual(
      byCorrelation(ofKind('Memcpy')).map((m) => [m.bytes, m.copy_kind, m.src_kind, m.dst_kind, (m.flags as number) & 1]),
    );
    const apis = rows<{ name: string; domain: number; tid: number; correlation_id: number; return_value: number }>(
      file,
      'SELECT s.value AS name, a.domain, a.tid, a.correlation_id, a.return_value FROM api_calls a JOIN strings s ON s.id = a.name_id ORDER BY a.correlation_id',
    );
    expect(apis).toEqual(
      byCorrelation(ofKind('ApiCall')).map((a) => ({
        name: str(a.name_sid as number),
        domain: a.domain,
        tid: a.thread_id,
        correlation_id: a.correlation_id,
        return_value: a.return_value,
      })),
    );
    // Each zone's busy time (schema 5) and shape (schema 6) are what the SQL zoner computes from its rows.
    const { written, recomputed } = zonesWrittenAndRecomputed(file, path.dirname(file));
    expect(written.filter((z) => z.table_id === 2).every((z) => typeof z.copy_kind_rows === 'string')).toBe(true);
    expect(written.some((z) => (z.max_gap_ns as number) > 0)).toBe(true);
    expect(written.every((z) => (z.busy_ns as number) > 0 || z.table_id === 6)).toBe(true);
    expect(recomputed).toEqual(written);
    expect(rows<Record<string, number>>(file, 'SELECT value, bytes, memory_kind, is_async FROM memsets ORDER BY correlation_id')).toEqual(
      byCorrelation(ofKind('Memset')).map((m) => ({ value: m.value, bytes: m.bytes, memory_kind: m.memory_kind, is_async: (m.flags as number) & 1 })),
    );
  });

  it('stores the demangled form of mangled C++ names beside them (schema 7), NULL for every other string', async () => {
    const file = newRecording('demangled');
    const ingest = new Ingest(file, { originNs: origin() });
    await ingest.ingestFile(stream, { final: true });
    await ingest.finish();
    const strings = rows<{ value: string; demangled: string | null }>(file, 'SELECT value, demangled FROM strings');
    const mangled = strings.filter((s) => s.value.startsWith('_Z'));
    // The encoder's first kernel is named as CUPTI names C++ kernels.
    expect(mangled).toEqual([{ value: '_Z9normaliseIdEvPKT_PS0_i', demangled: 'void normalise<double>(double const*, double*, int)' }]);
    expect(strings.filter((s) => !s.value.startsWith('_Z')).map((s) => s.demangled)).toEqual(strings.filter((s) => !s.value.startsWith('_Z')).map(() => null));
    expect(strings.some((s) => s.value === 'cudaLaunchKernel')).toBe(true);
  });

  it('stores the launcher variables of each process (ProcessEnv, schema 8) as written, an empty value included', async () => {
    const file = newRecording('process-env');
    const ingest = new Ingest(file, { originNs: origin() });
    await ingest.ingestFile(stream, { final: true });
    await ingest.finish();
    const env = ofKind('ProcessEnv').map((e) => ({ pid: 4242, name: str(e.name_sid as number), value: str(e.value_sid as number) }));
    expect(env.map((e) => e.name)).toEqual(['RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'CUDA_VISIBLE_DEVICES']);
    expect(rows(file, 'SELECT pid, name, value FROM process_env ORDER BY name')).toEqual([...env].sort((a, b) => (String(a.name) < String(b.name) ? -1 : 1)));
    // The ingest stores the variables; the rank columns are filled when a recording is finished (test/record/ranks.test.ts).
    expect(rows(file, 'SELECT rank FROM processes')).toEqual([{ rank: null }]);
  });

  it('creates devices, contexts and streams, including implicit ones, with flags and priorities', async () => {
    const file = newRecording('tables');
    const ingest = new Ingest(file, { originNs: origin() });
    await ingest.ingestFile(stream, { final: true });
    await ingest.finish();
    const d = ofKind('Device')[0]!;
    const hex = d.uuid as string;
    const [device] = rows<Record<string, number | string>>(file, "SELECT * FROM devices WHERE uuid LIKE 'GPU-%'");
    expect(device).toMatchObject({
      uuid: `GPU-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
      name: str(d.name_sid as number),
      sm_count: d.sm_count,
      async_engine_count: d.async_engine_count,
      total_memory_bytes: d.total_memory_bytes,
    });
    // Declared streams keep their flags and priority; streams seen only in operations are implicit (flag 8).
    const declared = new Map(
      ofKind('Stream').map((s) => [`${s.context_id}/${s.stream_id}`, { cupti_stream_id: s.stream_id, flags: s.flags, priority: s.priority }]),
    );
    const want = new Map(declared);
    for (const op of expected.records.filter((r) => ['Kernel', 'Memcpy', 'Memset', 'CudaEvent', 'Synchronization'].includes(r.kind))) {
      const key = `${op.context_id}/${op.stream_id}`;
      if (op.stream_id === 0xffffffff || want.has(key)) continue;
      want.set(key, { cupti_stream_id: op.stream_id, flags: 8, priority: null as unknown as number });
    }
    const streams = rows<{ cupti_stream_id: number; flags: number; priority: number | null }>(
      file,
      'SELECT cupti_stream_id, flags, priority FROM streams ORDER BY cupti_stream_id',
    );
    expect(streams).toEqual([...want.values()].sort((a, b) => (a.cupti_stream_id as number) - (b.cupti_stream_id as number)));
    expect(streams.find((s) => s.cupti_stream_id === 99)).toEqual({ cupti_stream_id: 99, flags: 8, priority: null });
    // "Not applicable" ids are NULL, not a stream or event called 4294967295.
    const syncs = rows<{ stream_id: number | null; event_id: number | null; sync_type: number }>(
      file,
      'SELECT stream_id, event_id, sync_type FROM syncs ORDER BY correlation_id',
    );
    expect(syncs.map((x) => x.event_id)).toEqual(byCorrelation(ofKind('Synchronization')).map((x) => (x.event_id === 0xffffffff ? null : x.event_id)));
    expect(syncs.map((x) => x.stream_id === null)).toEqual(byCorrelation(ofKind('Synchronization')).map((x) => x.stream_id === 0xffffffff));
    const shift = 0; // this recording's origin is the stream's own
    expect(rows<{ device_ns: number | null; event_id: number }>(file, 'SELECT device_ns, event_id FROM cuda_events ORDER BY id')).toEqual(
      ofKind('CudaEvent').map((e) => ({ device_ns: (e.device_ns as number) + shift, event_id: e.event_id })),
    );
    const p = ofKind('Process').at(-1)!;
    const [proc] = rows<Record<string, string | number>>(file, 'SELECT * FROM processes');
    expect(proc).toMatchObject({
      pid: expected.header.pid,
      host: str(p.hostname_sid as number),
      command: str(p.command_sid as number),
      driver_version: p.driver_version,
      complete: 1,
      end_ns: ofKind('End')[0]!.end_ns,
    });
  });

  it('pairs NVTX start/end markers, keeps instantaneous and never-closed ones', async () => {
    const file = newRecording('nvtx');
    const ingest = new Ingest(file, { originNs: origin() });
    await ingest.ingestFile(stream, { final: true });
    await ingest.finish();
    const want: { name: string; start_ns: number; end_ns: number | null; domain: string | null }[] = [];
    const open = new Map<number, (typeof want)[number]>();
    for (const m of ofKind('Marker')) {
      const flags = m.flags as number;
      if (flags & 2) {
        const r = {
          name: str(m.name_sid as number) ?? '',
          start_ns: m.timestamp_ns as number,
          end_ns: null,
          domain: (m.domain_sid ? str(m.domain_sid as number) : null) ?? null,
        };
        open.set(m.id as number, r);
        want.push(r);
      } else if (flags & 4) {
        const r = open.get(m.id as number);
        if (r) {
          r.end_ns = m.timestamp_ns as number;
          open.delete(m.id as number);
        }
      } else {
        want.push({
          name: str(m.name_sid as number) ?? '',
          start_ns: m.timestamp_ns as number,
          end_ns: null,
          domain: (m.domain_sid ? str(m.domain_sid as number) : null) ?? null,
        });
      }
    }
    const ranges = rows<{ name: string; start_ns: number; end_ns: number | null; domain: string | null }>(
      file,
      `SELECT s.value AS name, start_ns, end_ns, d.value AS domain FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id
       LEFT JOIN strings d ON d.id = r.domain_id ORDER BY start_ns, r.id`,
    );
    expect(ranges).toEqual(want.sort((a, b) => a.start_ns - b.start_ns));
    expect(ranges.some((r) => r.end_ns !== null)).toBe(true);
    expect(ranges.some((r) => r.end_ns === null)).toBe(true);
  });

  it("stores each NVTX payload with its range as JSON named by the schema's entries, whichever record came first", async () => {
    const file = newRecording('payloads');
    const ingest = new Ingest(file, { originNs: origin() });
    await ingest.ingestFile(stream, { final: true });
    await ingest.finish();
    const withPayload = rows<{ name: string; payload: string }>(
      file,
      'SELECT s.value AS name, r.payload FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id WHERE r.payload IS NOT NULL ORDER BY r.start_ns',
    );
    // The synthetic stream's payloads (native/collector/synthetic_stream.cc): the range's between its Start and End,
    // the mark's before the mark, and one for a marker that never comes (no row).
    expect(withPayload.map((r) => ({ name: r.name, payload: JSON.parse(r.payload) as unknown }))).toEqual([
      {
        name: 'issue chunk 0',
        payload: {
          'NCCL communicator ID': '18364758544493064720', // above 2^53: exact, as text
          'Message size [bytes]': 16777216,
          'Reduction operation': 'Sum',
          '#3': -1, // an unnamed entry, by its index
          'ratio "q" \\ f\u00fcr': 0.5,
          'unnamed enum value': 77, // an enum value no name was registered for
        },
      },
      { name: '', payload: { '#0': 12345 } },
    ]);
    const ranges = rows<{ n: number }>(file, 'SELECT count(*) AS n FROM nvtx_ranges')[0]!.n;
    expect(ranges).toBe(ofKind('Marker').filter((m) => !((m.flags as number) & 4)).length);
  });

  it('gives the same rows when the file is fed in growing slices (a target still writing)', async () => {
    const full = fs.readFileSync(stream);
    const growing = path.join(dir, 'growing.ssr');
    const file = newRecording('slices');
    const ingest = new Ingest(file, { originNs: origin() });
    for (const cut of [10, 64, 65, 200, 1000, 1001, 50_000, 120_000, full.length]) {
      fs.writeFileSync(growing, full.subarray(0, Math.min(cut, full.length)));
      await ingest.ingestFile(growing, { final: cut >= full.length });
    }
    await ingest.finish();
    const once = newRecording('once');
    const i2 = new Ingest(once, { originNs: origin() });
    await i2.ingestFile(stream, { final: true });
    await i2.finish();
    for (const table of ['kernels', 'memcpys', 'api_calls', 'nvtx_ranges', 'streams', 'strings']) {
      expect(rows(file, `SELECT * FROM ${table} ORDER BY 1`)).toEqual(rows(once, `SELECT * FROM ${table} ORDER BY 1`));
    }
  });

  it('rebases two processes onto one origin and shares their GPU', async () => {
    const a = syntheticStream(dir, 'proc-a', ['--pid', '100', '--origin-ns', '1763800000000000000']);
    const b = syntheticStream(dir, 'proc-b', ['--pid', '200', '--origin-ns', '1763800000000500000']);
    const file = newRecording('two');
    const ingest = new Ingest(file, { originNs: 1763800000000000000n });
    await ingest.ingestFile(a.stream, { final: true });
    await ingest.ingestFile(b.stream, { final: true });
    await ingest.finish();
    expect(rows(file, "SELECT count(*) AS n FROM devices WHERE uuid LIKE 'GPU-%'")).toEqual([{ n: 1 }]);
    const contexts = new Set(ofKind('Context').map((c) => c.context_id)).size;
    expect(rows(file, 'SELECT pid, count(*) AS n FROM contexts GROUP BY pid ORDER BY pid')).toEqual([
      { pid: 100, n: contexts },
      { pid: 200, n: contexts },
    ]);
    const starts = rows<{ pid: number; s: number }>(
      file,
      `SELECT c.pid, min(k.start_ns) AS s FROM kernels k JOIN contexts c ON c.id = k.context_id GROUP BY c.pid ORDER BY c.pid`,
    );
    expect(starts).toEqual([
      { pid: 100, s: -250 },
      { pid: 200, s: 500_000 - 250 },
    ]);
    expect(rows(file, 'SELECT pid, origin_offset_ns FROM processes ORDER BY pid')).toEqual([
      { pid: 100, origin_offset_ns: 0 },
      { pid: 200, origin_offset_ns: 500_000 },
    ]);
  });

  it('reports a stream cut inside a record as truncated and keeps the records before it', async () => {
    const full = fs.readFileSync(stream);
    const cut = path.join(dir, 'cut.ssr');
    fs.writeFileSync(cut, full.subarray(0, full.length - 20));
    const file = newRecording('truncated');
    const ingest = new Ingest(file, { originNs: origin() });
    const p = await ingest.ingestFile(cut, { final: true });
    await ingest.finish();
    expect(p.complete).toBe(false);
    expect(p.truncated).toMatchObject({ missingBytes: 20 });
    expect(rows(file, 'SELECT count(*) AS n FROM kernels')).toEqual([{ n: ofKind('Kernel').length }]);
  });

  it('rejects bad magic and a corrupt record with the file name and byte, keeping what came before', async () => {
    const foreign = path.join(dir, 'foreign.ssr');
    fs.writeFileSync(foreign, Buffer.alloc(256, 7));
    const f1 = newRecording('foreign');
    const i1 = new Ingest(f1, { originNs: origin() });
    await expect(i1.ingestFile(foreign, { final: true })).rejects.toThrow(`${foreign}: not a StreamScope record stream (bad magic)`);
    await i1.finish();

    const bytes = fs.readFileSync(stream);
    let at = 64;
    let kernelsBefore = 0;
    for (let i = 0; i < 20; i++) {
      if (bytes.readUInt16LE(at) === 6) kernelsBefore++;
      at += bytes.readUInt32LE(at + 4);
    }
    bytes.writeUInt32LE(12, at + 4);
    const bad = path.join(dir, 'bad.ssr');
    fs.writeFileSync(bad, bytes);
    const f2 = newRecording('bad');
    const i2 = new Ingest(f2, { originNs: origin() });
    await expect(i2.ingestFile(bad, { final: true })).rejects.toThrow(`${bad}: corrupt record at byte ${at}: size 12 is not a positive multiple of 8`);
    await i2.finish();
    expect(rows(f2, 'SELECT count(*) AS n FROM kernels')).toEqual([{ n: kernelsBefore }]);
  });

  it('refuses a database that is not a recording', () => {
    const other = path.join(dir, 'other.sqlite');
    const db = new Database(other);
    db.exec('CREATE TABLE t (x)');
    db.close();
    expect(() => new Ingest(other, { originNs: 1n })).toThrow(`${other}: not a StreamScope recording`);
  });
});
