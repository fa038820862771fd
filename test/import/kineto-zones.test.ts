// The Kineto importer's zones are built natively as its rows are written
// (native/addon/src/trace_import.cc, zone_builder.h BlockZones), so that
// ensureZones finds nothing left to do: they must be the zones the SQL
// builder (store/zone-tables.ts zonesFromRowsSql + zoneShapeSql) makes of
// the same rows, row for row, with their storage classes: on real traces, and
// on a generated one whose lanes interleave, whose starts go back within a
// lane, with negative and zero durations, several copy kinds and blocks of
// 4096 rowids.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importKineto, kinetoTraceOptions } from '../../profiler/import/kineto.ts';
import { RecordingWriter } from '../../profiler/import/recording-writer.ts';
import { importKinetoTrace } from '../../profiler/native/addon.ts';
import { openRecording, type Db } from '../../profiler/store/database.ts';
import { ensureZones } from '../../profiler/store/zones.ts';
import { tempDir } from '../helpers/native.ts';

const dir = tempDir('kineto-zones');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every zone, each value with its storage class, in key order. */
function zonesOf(db: Db): unknown[][] {
  const cols = (db.prepare("SELECT name FROM pragma_table_info('zones')").all() as { name: string }[]).map((c) => c.name);
  return db
    .prepare(`SELECT ${cols.map((c) => `typeof(${c}), ${c}`).join(', ')} FROM zones ORDER BY table_id, lane, start_ns, first_id`)
    .raw(true)
    .all() as unknown[][];
}

/** The zones SQL makes of the same rows: the zones deleted, ensureZones. */
function sqlZonesOf(db: Db): unknown[][] {
  db.prepare('DELETE FROM zones').run();
  ensureZones(db);
  return zonesOf(db);
}

/** A trace of every zoned kind, lanes interleaved in file order, some starts going back, odd durations. */
function generatedTrace(file: string): void {
  const events: object[] = [{ ph: 'M', name: 'process_labels', pid: 9, args: { labels: 'CPU' } }];
  const copies = ['Memcpy HtoD (Pinned -> Device)', 'Memcpy DtoH (Device -> Pageable)', 'Memcpy DtoD (Device -> Device)'];
  for (let n = 0; n < 12000; n++) {
    const stream = 7 + (n % 3);
    // Every 37th event starts before the one before it on its lane; every 101st lasts a negative time, every 53rd none.
    const ts = 1000 + n * 2 - (n % 37 === 0 ? 50 : 0);
    const dur = n % 101 === 0 ? -0.5 : n % 53 === 0 ? 0 : 1.25;
    const gpu = { device: 0, context: 1, stream, correlation: n };
    switch (n % 6) {
      case 0:
        events.push({ ph: 'X', cat: 'kernel', name: 'k', pid: 0, tid: stream, ts, dur, args: { ...gpu, grid: [1, 1, 1], block: [32, 1, 1] } });
        break;
      case 1:
        events.push({ ph: 'X', cat: 'gpu_memcpy', name: copies[n % 3], pid: 0, tid: stream, ts, dur, args: { ...gpu, bytes: 1024 } });
        break;
      case 2:
        events.push({ ph: 'X', cat: 'gpu_memset', name: 'Memset (Device)', pid: 0, tid: stream, ts, dur, args: { ...gpu, bytes: 64 } });
        break;
      case 3:
        events.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 9, tid: 1 + (n % 2), ts, dur, args: { cbid: 211, correlation: n } });
        break;
      case 4:
        events.push({ ph: 'X', cat: 'user_annotation', name: `step${n % 5}`, pid: 9, tid: 1 + (n % 4), ts, dur });
        break;
      default:
        // A stream synchronize, or a context one (no stream: lane 0).
        events.push({
          ph: 'X',
          cat: 'cuda_sync',
          name: n % 4 === 1 ? 'Context Sync' : 'Stream Sync',
          pid: 0,
          tid: stream,
          ts,
          dur,
          args: { ...gpu, stream: n % 4 === 1 ? -1 : stream },
        });
    }
  }
  fs.writeFileSync(file, JSON.stringify({ traceEvents: events }));
}

const fixtures = path.join(import.meta.dirname, '../fixtures/kineto');
const generated = path.join(dir, 'generated.json');
generatedTrace(generated);
const traces = [
  ...fs
    .readdirSync(fixtures)
    .filter((f) => f.endsWith('.json'))
    .map((f) => path.join(fixtures, f)),
  generated,
];

describe('the native importer zones its rows as SQL would', () => {
  for (const trace of traces) {
    it(path.basename(trace), () => {
      // The rows as the native importer leaves them, before endBulkLoad: every row already zoned.
      const writer = new RecordingWriter(path.join(dir, `${path.basename(trace)}.sqlite`), { originNs: 0, inputs: [trace] });
      try {
        writer.handOver((file) => importKinetoTrace(trace, kinetoTraceOptions(file)));
        const native = zonesOf(writer.db);
        expect(native.length).toBeGreaterThan(0);
        expect(ensureZones(writer.db)).toBe(0);
        expect(sqlZonesOf(writer.db)).toEqual(native);
      } finally {
        writer.abandon();
      }
    });
  }

  it('zones again the rows of a host pid learned late (their lanes moved)', async () => {
    // GPU work before the host is named, then host calls under Kineto's unknown pid: the importer moves them to the
    // host's pid, and with them the calls' thread lanes.
    const trace = path.join(dir, 'late-pid.json');
    const events = [
      { ph: 'X', cat: 'kernel', name: 'k', pid: 0, tid: 7, ts: 10, dur: 1, args: { device: 0, context: 1, stream: 7, correlation: 1 } },
      { ph: 'M', name: 'process_labels', pid: 5, args: { labels: 'CPU' } },
      { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: -1, tid: 3, ts: 5, dur: 1, args: { cbid: 211, correlation: 1 } },
      { ph: 'X', cat: 'user_annotation', name: 'step', pid: -1, tid: 3, ts: 4, dur: 8 },
    ];
    fs.writeFileSync(trace, JSON.stringify({ traceEvents: events }));
    const out = path.join(dir, 'late-pid.sqlite');
    await importKineto(trace, out);
    const db = openRecording(out);
    try {
      expect(db.prepare('SELECT count(*) FROM api_calls WHERE pid = 5').pluck().get()).toBe(1);
      const zones = zonesOf(db);
      expect(sqlZonesOf(db)).toEqual(zones);
    } finally {
      db.close();
    }
  });
});
