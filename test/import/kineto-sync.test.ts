// What a PyTorch profiler (Kineto) trace says about dependencies and CPU
// operations, imported from real traces (test/fixtures/kineto/PROVENANCE.md)
// through both of the native reader's paths — simdjson, and JSON.parse for
// every event (the path an event simdjson refuses takes) — and checked
// against the trace's own events, read here independently with JSON.parse:
// cuda_sync events become the recording's synchronizations, each Stream Wait
// Event a wait the dependency view reports as an event edge from the
// operation the event's record captured; aten:: operators are CPU
// operations, not ranges; autograd's fwdbwd flows tie backward operators to
// forward ones; a trace without cuda_sync events says so in the report and
// on the timeline. No mock anywhere: the files as torch.profiler wrote them.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { dependenciesOf, type Dependencies } from '../../profiler/analysis/replay/dependencies.ts';
import { callName, loadHost } from '../../profiler/analysis/host.ts';
import { pickIterationRange, rangeNames } from '../../profiler/analysis/diagnosis/iterations.ts';
import { loadTrace, OpKind } from '../../profiler/analysis/trace.ts';
import { NO_SYNC_EVENTS_NOTE } from '../../profiler/contract/dependencies.ts';
import { exportChromeTrace } from '../../profiler/export/chrome-trace.ts';
import { importKineto } from '../../profiler/import/kineto.ts';
import { loadTimelineColumns } from '../../profiler/native/addon.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';
import { digest } from './kineto-golden.ts';

const root = path.resolve(import.meta.dirname, '../..');
const kineto = (name: string) => path.join(root, 'test/fixtures/kineto', name);
const TRAIN = kineto('torch_train_loop_fixed_h200.json');
const STREAMS = kineto('torch_streams_sync_h200.json');
const ADD_LOOP = kineto('torch_add_loop_h100.json');
const cli = path.join(root, 'profiler/cli/streamscope.ts');
const dir = tempDir('kineto-sync');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Ev {
  ph: string;
  cat?: string;
  name: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  id?: number;
  args?: Record<string, number | string>;
}
const eventsOf = (file: string) => (JSON.parse(fs.readFileSync(file, 'utf8')) as { traceEvents: Ev[] }).traceEvents;

/** The trace imported through one path (memoised: each is imported once). */
const imported = new Map<string, Promise<string>>();
function importVia(file: string, parseAllInJs: boolean): Promise<string> {
  const key = `${file}:${parseAllInJs}`;
  if (!imported.has(key)) {
    const out = path.join(dir, `${path.basename(file, '.json')}-${parseAllInJs ? 'js' : 'simdjson'}.sqlite`);
    imported.set(
      key,
      importKineto(file, out, { parseAllInJs }).then(() => out),
    );
  }
  return imported.get(key)!;
}

function query<T>(file: string, f: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return f(db);
  } finally {
    db.close();
  }
}

function dependencies(file: string): Dependencies {
  const db = openRecording(file, { readonly: true });
  try {
    const columns = loadTimelineColumns(file);
    const trace = loadTrace(db, columns.ops, columns.calls);
    return dependenciesOf(trace, loadHost(db, trace.ops, columns.calls));
  } finally {
    db.close();
  }
}

const SYNC_TYPE: Record<string, number> = { 'Event Sync': 1, 'Stream Wait Event': 2, 'Stream Sync': 3, 'Context Sync': 4 };

/** One synchronization as the trace has it and as the recording must: type, correlation, CUPTI stream (-1: none), event (-1: none). */
const syncKey = (type: number, correlation: number, stream: number, event: number) => `${type}:${correlation}:${stream}:${event}`;

const PATHS = [
  ['simdjson', false],
  ['JSON.parse', true],
] as const;

describe('cuda_sync events become the synchronizations the collector would have recorded', () => {
  for (const file of [TRAIN, STREAMS]) {
    const trace = eventsOf(file);
    const syncs = trace.filter((e) => e.ph === 'X' && e.cat === 'cuda_sync');
    for (const [via, js] of PATHS) {
      it(`${path.basename(file)} (${via}): one syncs row per cuda_sync event, its type, call, stream and event`, async () => {
        const out = await importVia(file, js);
        expect(syncs.length).toBeGreaterThan(0);
        const expected = syncs.map((e) => {
          const a = e.args!;
          const type = SYNC_TYPE[e.name]!;
          const event = type <= 2 ? Number(a.wait_on_cuda_event_id) : -1;
          return syncKey(type, Number(a.correlation), Number(a.stream), event);
        });
        const got = query(out, (db) =>
          (
            db
              .prepare(
                `SELECT y.sync_type AS t, y.correlation_id AS c, coalesce(s.cupti_stream_id, -1) AS s, coalesce(y.event_id, -1) AS e, y.pid
                FROM syncs y LEFT JOIN streams s ON s.id = y.stream_id`,
              )
              .all() as { t: number; c: number; s: number; e: number; pid: number }[]
          ).map((r) => ({ key: syncKey(r.t, r.c, r.s, r.e), pid: r.pid })),
        );
        expect(got.map((g) => g.key).sort()).toEqual(expected.sort());
        // On the process that made the calls (the trace puts them under the device's pid): each is its call's.
        const hostPid = trace.find((e) => e.cat === 'cuda_runtime')!.pid;
        expect(new Set(got.map((g) => g.pid))).toEqual(new Set([hostPid]));
        const calls = new Set(trace.filter((e) => e.cat === 'cuda_runtime').map((e) => Number(e.args!.correlation)));
        for (const e of syncs) expect(calls.has(Number(e.args!.correlation)), `${e.name} ${e.args!.correlation}`).toBe(true);
      });
    }
  }

  it('the simdjson and the JSON.parse paths write the same recording, row for row', async () => {
    for (const file of [TRAIN, STREAMS, ADD_LOOP]) {
      const [a, b] = [await importVia(file, false), await importVia(file, true)];
      expect(digest(a, file)).toEqual(digest(b, file));
    }
  });
});

describe("Stream Wait Events: the dependency view's event edges", () => {
  /** For each Stream Wait Event, from the trace alone: the op its event's record captured and the op it held (correlation ids). */
  function expectedEdges(trace: Ev[]) {
    const calls = trace.filter((e) => e.cat === 'cuda_runtime' || e.cat === 'cuda_driver').sort((a, b) => a.ts - b.ts);
    const callOf = new Map(calls.map((c) => [Number(c.args!.correlation), c]));
    const ops = trace
      .filter((e) => e.ph === 'X' && (e.cat === 'kernel' || e.cat === 'gpu_memcpy' || e.cat === 'gpu_memset'))
      .map((o) => ({ o, issued: callOf.get(Number(o.args!.correlation))!.ts, stream: Number(o.args!.stream) }));
    return trace
      .filter((e) => e.cat === 'cuda_sync' && e.name === 'Stream Wait Event')
      .map((w) => {
        const wait = callOf.get(Number(w.args!.correlation))!;
        expect(wait.name).toBe('cudaStreamWaitEvent');
        // PyTorch's wait_stream: the event recorded on the other stream by the call just before the wait, on its thread.
        const record = calls.filter((c) => c.tid === wait.tid && c.ts < wait.ts && c.name.startsWith('cudaEventRecord')).at(-1)!;
        const waiting = Number(w.args!.stream);
        const before = (stream: number) => ops.filter((x) => x.stream === stream && x.issued < record.ts).at(-1);
        const next = ops.filter((x) => x.stream === waiting && x.issued > wait.ts).sort((a, b) => a.issued - b.issued)[0]!;
        const streams = [...new Set(ops.map((x) => x.stream))].filter((s) => s !== waiting && before(s));
        return { wait, record, waiting, next: next.o, streams, captured: streams.map((s) => before(s)!.o) };
      });
  }

  for (const [via, js] of PATHS) {
    it(`the fixed training loop (${via}): each of its 6 waits is an edge from the copy on the side stream to the compute kernel after the wait`, async () => {
      const out = await importVia(TRAIN, js);
      const trace = eventsOf(TRAIN);
      const waits = expectedEdges(trace);
      expect(waits).toHaveLength(6);
      const d = dependencies(out);
      const { ops } = d.trace;
      const { calls } = d.host;
      const edges = [...d.waitFrom.keys()].map((j) => ({
        from: ops.correlation[d.waitFrom[j]!]!,
        fromKind: ops.kind[d.waitFrom[j]!]!,
        to: ops.correlation[d.waitTo[j]!]!,
        toKind: ops.kind[d.waitTo[j]!]!,
        record: calls.correlation[d.waitRecord[j]!]!,
        recordName: callName(d.host, d.waitRecord[j]!),
        wait: calls.correlation[d.waitCall[j]!]!,
        waitName: callName(d.host, d.waitCall[j]!),
      }));
      expect(edges).toHaveLength(waits.length);
      const sideStreams = new Set<number>();
      for (const w of waits) {
        // One other stream had work before the record: the side (copy) stream; what it captured, the batch's copy.
        expect(w.streams).toHaveLength(1);
        sideStreams.add(w.streams[0]!);
        const [copy] = w.captured;
        expect(copy!.cat).toBe('gpu_memcpy');
        expect(copy!.name).toMatch(/^Memcpy HtoD \(Pinned -> Device\)/);
        expect(w.next.cat).toBe('kernel');
        expect(edges).toContainEqual({
          from: Number(copy!.args!.correlation),
          fromKind: OpKind.Memcpy,
          to: Number(w.next.args!.correlation),
          toKind: OpKind.Kernel,
          record: Number(w.record.args!.correlation),
          recordName: 'cudaEventRecordWithFlags',
          wait: Number(w.wait.args!.correlation),
          waitName: 'cudaStreamWaitEvent',
        });
      }
      expect(sideStreams.size).toBe(1);
      expect([...sideStreams][0]).not.toBe(waits[0]!.waiting);
      // The record rows: one per wait, on the side stream, the trace's event ids.
      const records = query(
        out,
        (db) =>
          db
            .prepare(
              'SELECT e.event_id AS event, e.correlation_id AS c, s.cupti_stream_id AS stream FROM cuda_events e JOIN streams s ON s.id = e.stream_id ORDER BY e.id',
            )
            .all() as { event: number; c: number; stream: number }[],
      );
      expect(records).toEqual(
        waits.map((w) => ({
          event: Number(trace.find((e) => e.cat === 'cuda_sync' && e.args!.correlation === w.wait.args!.correlation)!.args!.wait_on_cuda_event_id),
          c: Number(w.record.args!.correlation),
          stream: [...sideStreams][0],
        })),
      );
    });
  }

  it('torch_streams: the first wait_stream is an edge (one stream had work); the three after it, where several had, are not made up, and the notes say so', async () => {
    const out = await importVia(STREAMS, false);
    const waits = expectedEdges(eventsOf(STREAMS));
    expect(waits.map((w) => w.streams.length)).toEqual([1, 2, 3, 4]);
    const d = dependencies(out);
    expect(d.waitFrom.length).toBe(1);
    const { ops } = d.trace;
    const [first] = waits;
    expect(ops.correlation[d.waitFrom[0]!]).toBe(Number(first!.captured[0]!.args!.correlation));
    expect(ops.correlation[d.waitTo[0]!]).toBe(Number(first!.next.args!.correlation));
    expect(d.host.waits).toHaveLength(4);
    const notes = query(out, (db) => JSON.parse(db.prepare("SELECT value FROM meta WHERE key = 'notes'").pluck().get() as string) as string[]);
    expect(notes).toEqual([expect.stringMatching(/4 of 4 stream waits .*; 1 tied, each .*; 3 left without one/)]);
  });

  it('export → import keeps the waits, their records and the edges (Kineto-shaped cuda_sync events that name their records)', async () => {
    const first = await importVia(TRAIN, false);
    const json = path.join(dir, 'train-export.json');
    const db = openRecording(first, { readonly: true });
    try {
      await exportChromeTrace(db, json);
    } finally {
      db.close();
    }
    const again = path.join(dir, 'train-again.sqlite');
    await importKineto(json, again);
    const rows = (file: string) =>
      query(file, (q) => ({
        syncs: q
          .prepare('SELECT sync_type, correlation_id, event_id, start_ns - (SELECT min(start_ns) FROM syncs) AS t FROM syncs ORDER BY start_ns, correlation_id')
          .all(),
        records: q.prepare('SELECT event_id, correlation_id FROM cuda_events ORDER BY correlation_id').all(),
        ops: q.prepare('SELECT count(*) AS n, count(forward_id) AS backward FROM cpu_ops').get(),
      }));
    expect(rows(again)).toEqual(rows(first));
    const edges = (d: Dependencies) => [...d.waitFrom.keys()].map((j) => [d.trace.ops.correlation[d.waitFrom[j]!], d.trace.ops.correlation[d.waitTo[j]!]]);
    expect(edges(dependencies(again))).toEqual(edges(dependencies(first)));
    // The records were named this time: nothing left to infer, so no note about it.
    const notes = query(again, (q) => q.prepare("SELECT value FROM meta WHERE key = 'notes'").pluck().get());
    expect(notes).toBeUndefined();
  });
});

describe('aten:: operators are CPU operations, not ranges', () => {
  for (const [via, js] of PATHS) {
    it(`the fixed training loop (${via}): cpu_ops holds every cpu_op event; the ranges are the user annotations alone`, async () => {
      const out = await importVia(TRAIN, js);
      const trace = eventsOf(TRAIN);
      const cpuOps = trace.filter((e) => e.ph === 'X' && e.cat === 'cpu_op');
      const annotations = trace.filter((e) => e.ph === 'X' && e.cat === 'user_annotation');
      expect(cpuOps.length).toBe(942);
      const got = query(out, (db) => ({
        ops: db.prepare('SELECT s.value AS name, count(*) AS n FROM cpu_ops o JOIN strings s ON s.id = o.name_id WHERE o.kind = 1 GROUP BY 1 ORDER BY 1').all(),
        rangeNames: db.prepare('SELECT DISTINCT s.value FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id ORDER BY 1').pluck().all(),
      }));
      const count = (evs: Ev[]) =>
        [...evs.reduce((m, e) => m.set(e.name, (m.get(e.name) ?? 0) + 1), new Map<string, number>())]
          .map(([name, n]) => ({ name, n }))
          .sort((a, b) => (a.name < b.name ? -1 : 1));
      expect(got.ops).toEqual(count(cpuOps));
      expect(got.rangeNames).toEqual([...new Set(annotations.map((e) => e.name))].sort());
      expect(got.rangeNames).toEqual(['Optimizer.step#SGD.step', 'Optimizer.zero_grad#SGD.zero_grad']);
      // The ranges list, and the iterations' pick, are the annotations.
      const db = openRecording(out, { readonly: true });
      try {
        expect(rangeNames(db).map((r) => r.name)).toEqual(expect.arrayContaining(got.rangeNames as string[]));
        expect(rangeNames(db).every((r) => !r.name.startsWith('aten::'))).toBe(true);
        expect(got.rangeNames).toContain(pickIterationRange(db));
      } finally {
        db.close();
      }
    });
  }

  it('`report --range aten::mm` is refused: no such range, and the ranges it offers are the user annotations', async () => {
    const out = await importVia(TRAIN, false);
    expect(eventsOf(TRAIN).some((e) => e.cat === 'cpu_op' && e.name === 'aten::mm')).toBe(true);
    const r = spawnSync(process.execPath, [cli, 'report', out, '--range', 'aten::mm'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("no NVTX range named 'aten::mm'; its ranges: 'Optimizer.step#SGD.step', 'Optimizer.zero_grad#SGD.zero_grad'");
    const ok = spawnSync(process.execPath, [cli, 'report', out, '--range', 'Optimizer.step#SGD.step'], { encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
  });

  it("autograd's fwdbwd flows: each backward operator names the forward operator it was made for", async () => {
    const out = await importVia(TRAIN, false);
    const flows = eventsOf(TRAIN).filter((e) => e.cat === 'fwdbwd');
    const pairs = new Map<number, { s?: Ev; f?: Ev }>();
    for (const e of flows) pairs.set(e.id!, { ...pairs.get(e.id!), [e.ph]: e });
    expect(pairs.size).toBe(54);
    const got = query(
      out,
      (db) =>
        db
          .prepare(
            `SELECT f.tid AS ftid, f.start_ns AS fstart, b.tid AS btid, b.start_ns AS bstart FROM cpu_ops b JOIN cpu_ops f ON f.id = b.forward_id ORDER BY b.start_ns`,
          )
          .all() as { ftid: number; fstart: number; btid: number; bstart: number }[],
    );
    expect(got).toHaveLength(54);
    // Forward on the main thread, backward on autograd's; at the flow ends' times (ns from the first timed event, the origin).
    const origin = Math.round(eventsOf(TRAIN).find((e) => e.ph === 'X')!.ts * 1000);
    const ns = (us: number) => Math.round(Math.round(us * 1000) - origin);
    const expected = [...pairs.values()]
      .map((p) => ({ ftid: p.s!.tid, fstart: ns(p.s!.ts), btid: p.f!.tid, bstart: ns(p.f!.ts) }))
      .sort((a, b) => a.bstart - b.bstart);
    expect(got).toEqual(expected);
    expect(new Set(got.map((g) => `${g.ftid} → ${g.btid}`)).size).toBe(1);
  });
});

describe('a trace without cuda_sync events says so', () => {
  it('torch_add_loop_h100: the report prints one line saying there is no dependency data and how to get it; the timeline warns', async () => {
    const out = await importVia(ADD_LOOP, false);
    expect(eventsOf(ADD_LOOP).some((e) => e.cat === 'cuda_sync')).toBe(false);
    const r = spawnSync(process.execPath, [cli, 'report', out], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.split('\n').filter((l) => /synchroni[sz]ation or dependency data/.test(l));
    expect(lines).toEqual([`note: ${NO_SYNC_EVENTS_NOTE}`]);
    expect(lines[0]).toContain('enable_cuda_sync_events=True');
    const json = JSON.parse(spawnSync(process.execPath, [cli, 'report', out, '--json'], { encoding: 'utf8' }).stdout) as { recording: { notes: string[] } };
    expect(json.recording.notes).toEqual([NO_SYNC_EVENTS_NOTE]);
    // The timeline's page shows the summary's warnings as banners.
    const q = new RecordingQuery('add', out);
    try {
      expect(q.summary().warnings).toEqual([`imported PyTorch profiler trace: ${NO_SYNC_EVENTS_NOTE}`]);
    } finally {
      q.close();
    }
  });

  it('a trace with them does not', async () => {
    const out = await importVia(TRAIN, false);
    const r = spawnSync(process.execPath, [cli, 'report', out], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('no synchronization or dependency data');
    const q = new RecordingQuery('train', out);
    try {
      expect(q.summary().warnings).toEqual([]);
    } finally {
      q.close();
    }
  });
});
