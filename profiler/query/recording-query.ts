// One open recording, answering the renderer's API (api.ts): summary,
// windowed timeline rows with level of detail, details of one item with
// its launch, search, stats and findings. The HTTP server (browser mode)
// and the Electron main process both call this class.
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import { analyze, type Analysis } from '../analysis/load.ts';
import { overlapByDevice } from '../analysis/overlap.ts';
import { summarizeCopies, summarizeKernels } from '../analysis/summary.ts';
import { categoryOfCopyKind, MEMORY_KIND_NAMES, OpCategory } from '../analysis/trace.ts';
import { openRecording, readMeta } from '../store/database.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { coverageInZone, itemsInZone, rowsByCorrelation, threadLane, zonesInWindow, type ZonedTable } from '../store/zones.ts';
import type {
  ApiErrorCode, ConcurrencyRequest, ConcurrencyResponse, CoverageSpan, FieldValue, ItemDetails, ItemKind, ItemRef, RecordingSummary,
  RowId, SearchRequest, SearchResponse, StatsResponse, StreamKind, TimelineItem, WindowRequest, WindowResponse,
} from './api.ts';
import type { Finding } from '../analysis/findings/types.ts';

/** An error the renderer shows by code (api.ts ApiErrorShape). */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly file?: string;
  constructor(code: ApiErrorCode, message: string, file?: string) {
    super(message);
    this.code = code;
    this.file = file;
  }
  toJSON() {
    return { code: this.code, message: this.message, file: this.file };
  }
}

/** Maps a store error to the API's codes by what it says. */
export function apiErrorOf(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof RecordingFileError) {
    const p = err.problem;
    const code: ApiErrorCode = /no such file/.test(p) ? 'not-found' : /newer StreamScope/.test(p) ? 'newer-schema'
      : /locked/.test(p) ? 'locked' : /corrupt|truncated/.test(p) ? 'corrupt' : 'not-a-recording';
    return new ApiError(code, err.message, err.file);
  }
  return new ApiError('internal', (err as Error).message ?? String(err));
}

const COPY_ITEM_KIND: Record<number, ItemKind> = {
  [OpCategory.HtoD]: 'memcpy-h2d', [OpCategory.DtoH]: 'memcpy-d2h', [OpCategory.DtoD]: 'memcpy-d2d', [OpCategory.PtoP]: 'memcpy-peer',
};

function streamKind(flags: number): StreamKind {
  return flags & 1 ? 'legacy-default' : flags & 4 ? 'per-thread-default' : flags & 2 ? 'non-blocking' : 'blocking';
}

/** Rows of a stream lane, per table, with how an item is named and coloured. */
const STREAM_TABLES: { table: ZonedTable; columns: string; kind: (r: Record<string, number>) => ItemKind }[] = [
  { table: 'kernels', columns: 'id, start_ns, end_ns, name_id', kind: () => 'kernel' },
  { table: 'memcpys', columns: 'id, start_ns, end_ns, copy_kind', kind: (r) => COPY_ITEM_KIND[categoryOfCopyKind(r.copy_kind!)] ?? 'memcpy-other' },
  { table: 'memsets', columns: 'id, start_ns, end_ns', kind: () => 'memset' },
];

type Row = Record<string, number>;

export class RecordingQuery {
  readonly recordingId: string;
  readonly path: string;
  readonly #db: Database;
  #analysis: Analysis | null = null;
  #summary: RecordingSummary | null = null;

  constructor(recordingId: string, file: string) {
    this.recordingId = recordingId;
    this.path = path.resolve(file);
    try {
      this.#db = openRecording(this.path, { readonly: true });
    } catch (err) {
      throw apiErrorOf(err);
    }
  }

  close(): void {
    this.#db.close();
  }

  /** The loaded columns and the diagnosis, computed once. */
  #analyzed(): Analysis {
    return (this.#analysis ??= analyze(this.#db));
  }

  #string(id: number | null): string {
    if (id === null) return '';
    return (this.#db.prepare('SELECT value FROM strings WHERE id = ?').pluck().get(id) as string | undefined) ?? `#${id}`;
  }

  /**
   * What the timeline needs first, from the zones and SQL aggregates only:
   * opening a recording must not wait for a pass over all its rows in JS.
   */
  summary(): RecordingSummary {
    if (this.#summary) return this.#summary;
    const db = this.#db;
    const meta = Object.fromEntries(readMeta(db));
    const counts = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    // Rows per lane and table, from the zones.
    const zoneRows = db.prepare('SELECT table_id AS t, lane, sum(rows) AS n FROM zones GROUP BY 1, 2').all() as { t: number; lane: number; n: number }[];
    const rowsOf = (table: number, lane: number) => zoneRows.find((z) => z.t === table && z.lane === lane)?.n ?? 0;
    // Busy time per stream: operations of one stream never overlap, so a sum.
    const busy = new Map<number, number>();
    for (const t of ['kernels', 'memcpys', 'memsets']) {
      for (const r of db.prepare(`SELECT stream_id AS s, sum(end_ns - start_ns) AS b FROM ${t} GROUP BY 1`).all() as { s: number; b: number }[]) {
        busy.set(r.s, (busy.get(r.s) ?? 0) + r.b);
      }
    }
    const deviceRows = db.prepare(`SELECT id, name, uuid, ordinal, cc_major AS ccMajor, cc_minor AS ccMinor, sm_count AS smCount,
        async_engine_count AS asyncEngineCount, total_memory_bytes AS totalMemoryBytes FROM devices ORDER BY id`).all() as Omit<RecordingSummary['devices'][number], 'busyNs'>[];
    const streamRows = db.prepare(`SELECT id, pid, device_id AS deviceId, context_id AS contextId, cupti_stream_id AS cuptiStreamId, flags, priority
        FROM streams ORDER BY device_id, cupti_stream_id`).all() as { id: number; pid: number; deviceId: number | null; contextId: number; cuptiStreamId: number; flags: number; priority: number | null }[];
    const deviceBusy = new Map<number, number>();
    for (const st of streamRows) if (st.deviceId !== null) deviceBusy.set(st.deviceId, (deviceBusy.get(st.deviceId) ?? 0) + (busy.get(st.id) ?? 0));
    const streams = streamRows
      .map((st) => ({ st, c: { kernels: rowsOf(1, st.id), memcpys: rowsOf(2, st.id), memsets: rowsOf(3, st.id), syncs: rowsOf(4, st.id) } }))
      .filter(({ c }) => c.kernels + c.memcpys + c.memsets + c.syncs > 0)
      .map(({ st, c }) => {
        const b = busy.get(st.id) ?? 0;
        const dev = st.deviceId !== null ? deviceBusy.get(st.deviceId) ?? 0 : 0;
        return {
          rowId: `stream:${st.id}`, id: st.id, pid: st.pid, deviceId: st.deviceId, contextId: st.contextId, cuptiStreamId: st.cuptiStreamId,
          kind: streamKind(st.flags), priority: st.priority, busyNs: b, shareOfDevice: dev > 0 ? b / dev : 0, counts: c,
        };
      });
    const threads = (db.prepare('SELECT pid, tid, name FROM threads ORDER BY pid, tid').all() as { pid: number; tid: number; name: string | null }[])
      .map((t) => ({ ...t, apiCalls: rowsOf(5, threadLane(t.pid, t.tid)), nvtxRanges: rowsOf(6, threadLane(t.pid, t.tid)) }));
    const processes = (db.prepare('SELECT pid, command, complete FROM processes ORDER BY pid').all() as { pid: number; command: string | null; complete: number }[])
      .map((p) => ({
        pid: p.pid, command: p.command, complete: p.complete === 1,
        threads: threads.filter((t) => t.pid === p.pid && t.apiCalls + t.nvtxRanges > 0)
          .map((t) => ({ ...t, apiRowId: `api:${t.pid}:${t.tid}`, nvtxRowId: `nvtx:${t.pid}:${t.tid}` })),
      }));
    const warnings: string[] = [];
    const dropped = counts('SELECT coalesce(sum(count), 0) AS n FROM dropped_records');
    if (dropped) warnings.push(`${dropped} records were dropped by the collector (buffers full): totals are lower bounds`);
    for (const e of db.prepare('SELECT message FROM collector_errors').pluck().all() as string[]) warnings.push(`collector: ${e}`);
    if (meta.complete !== '1') warnings.push(`incomplete recording: ${meta.incomplete_reason ?? 'not finished'}`);
    const span = db.prepare('SELECT min(start_ns) AS s, max(end_ns) AS e FROM zones').get() as { s: number | null; e: number | null };
    const total = (table: number) => zoneRows.filter((z) => z.t === table).reduce((n, z) => n + z.n, 0);
    this.#summary = {
      recordingId: this.recordingId,
      name: path.basename(this.path),
      path: this.path,
      schemaVersion: db.pragma('user_version', { simple: true }) as number,
      complete: meta.complete === '1',
      incompleteReason: meta.incomplete_reason ?? null,
      meta,
      startNs: span.s ?? 0,
      endNs: span.e ?? 0,
      devices: deviceRows.map((d) => ({ ...d, busyNs: deviceBusy.get(d.id) ?? 0 })),
      processes,
      streams,
      counts: { kernels: total(1), memcpys: total(2), memsets: total(3), syncs: total(4), apiCalls: total(5), nvtxRanges: total(6) },
      warnings,
    };
    return this.#summary;
  }

  /**
   * Items of each row in the window. Level of detail: a zone narrower than
   * `resolutionNs` becomes coverage without its rows being read; items
   * shorter than a pixel that touch merge into coverage spans.
   */
  window(req: WindowRequest): WindowResponse {
    const res = Math.max(1, req.resolutionNs);
    const nameIds = new Set<number>();
    const rows = req.rows.map((rowId) => {
      const items: TimelineItem[] = [];
      const coverage: CoverageSpan[] = [];
      // Sub-pixel work merges into coverage spans: consecutive work closer
      // than a pixel joins the span whatever its kind, and the span takes the
      // colour of the kind that contributed most.
      const kindCounts: Map<ItemKind, number>[] = [];
      const cover = (kind: ItemKind, start: number, end: number, count: number, depth?: number) => {
        const last = coverage[coverage.length - 1];
        if (last && last.depth === depth && start - last.endNs < res) {
          last.endNs = Math.max(last.endNs, end);
          last.count += count;
          const k = kindCounts[kindCounts.length - 1]!;
          k.set(kind, (k.get(kind) ?? 0) + count);
        } else {
          coverage.push({ startNs: start, endNs: Math.max(end, start + 1), count, kind, ...(depth !== undefined ? { depth } : {}) });
          kindCounts.push(new Map([[kind, count]]));
        }
      };
      const add = (ref: ItemRef, kind: ItemKind, start: number, end: number, nameId: number, depth?: number) => {
        if (end - start >= res) {
          items.push({ ref, kind, startNs: start, endNs: end, nameId, ...(depth !== undefined ? { depth } : {}) });
          if (nameId) nameIds.add(nameId);
          return;
        }
        cover(kind, start, end, 1, depth);
      };
      const [type, a, b] = rowId.split(':');
      const lanes: { table: ZonedTable; lane: number; columns: string; kind: (r: Row) => ItemKind }[] = [];
      if (type === 'stream') {
        for (const t of STREAM_TABLES) lanes.push({ ...t, lane: Number(a) });
        lanes.push({ table: 'syncs', lane: Number(a), columns: 'id, start_ns, end_ns', kind: () => 'sync' });
      } else if (type === 'api') {
        lanes.push({ table: 'api_calls', lane: threadLane(Number(a), Number(b)), columns: 'id, start_ns, end_ns, name_id', kind: () => 'api' });
      } else if (type === 'nvtx') {
        lanes.push({ table: 'nvtx_ranges', lane: threadLane(Number(a), Number(b)), columns: 'id, start_ns, coalesce(end_ns, start_ns) AS end_ns, name_id', kind: () => 'nvtx' });
      } else {
        throw new ApiError('bad-request', `unknown row '${rowId}'`);
      }
      const collected: { ref: ItemRef; kind: ItemKind; start: number; end: number; nameId: number; count?: number }[] = [];
      for (const l of lanes) {
        for (const z of zonesInWindow(this.#db, l.table, l.lane, req.startNs, req.endNs)) {
          if (z.endNs - z.startNs < res && l.table !== 'nvtx_ranges') {
            collected.push({ ref: { table: l.table, id: -1 }, kind: l.kind({ copy_kind: 0 }), start: z.startNs, end: z.endNs, nameId: 0, count: z.rows });
            continue;
          }
          // A dense zone (more rows than pixels it spans): sub-pixel rows are
          // bucketed per pixel inside SQLite, only the longer ones come as items.
          const dense = l.table !== 'nvtx_ranges' && z.rows > 2 * ((Math.min(z.endNs, req.endNs) - Math.max(z.startNs, req.startNs)) / res);
          if (dense) {
            for (const c of coverageInZone(this.#db, l.table, l.lane, z, req.startNs, req.endNs, req.startNs, res)) {
              collected.push({ ref: { table: l.table, id: -1 }, kind: l.kind({ copy_kind: c.copyKind ?? 0 }), start: c.startNs, end: c.endNs, nameId: 0, count: c.count });
            }
          }
          for (const r of itemsInZone<Row>(this.#db, l.table, l.lane, z, req.startNs, req.endNs, l.columns, dense ? res : 0)) {
            collected.push({ ref: { table: l.table, id: r.id! }, kind: l.kind(r), start: r.start_ns!, end: r.end_ns!, nameId: r.name_id ?? 0 });
          }
        }
      }
      collected.sort((x, y) => x.start - y.start);
      if (type === 'nvtx') {
        // Nesting depth: ranges still open when this one starts.
        const open: number[] = [];
        for (const c of collected) {
          while (open.length && open[open.length - 1]! <= c.start) open.pop();
          add(c.ref, c.kind, c.start, c.end, c.nameId, open.length);
          open.push(c.end);
        }
      } else {
        for (const c of collected) {
          if (c.ref.id === -1) cover(c.kind, c.start, c.end, c.count ?? 1);
          else add(c.ref, c.kind, c.start, c.end, c.nameId);
        }
      }
      coverage.forEach((span, i) => {
        let best: ItemKind = span.kind;
        let n = 0;
        for (const [k, c] of kindCounts[i]!) if (c > n) { n = c; best = k; }
        span.kind = best;
      });
      return { rowId, items, coverage };
    });
    const strings: Record<number, string> = {};
    for (const id of nameIds) strings[id] = this.#string(id);
    return { startNs: req.startNs, endNs: req.endNs, rows, strings };
  }

  concurrency(req: ConcurrencyRequest): ConcurrencyResponse {
    const { ops } = this.#analyzed().trace;
    const buckets = Math.max(1, Math.min(4096, Math.floor(req.buckets)));
    const width = (req.endNs - req.startNs) / buckets;
    const out = { kernels: new Array(buckets).fill(0), h2d: new Array(buckets).fill(0), d2h: new Array(buckets).fill(0), other: new Array(buckets).fill(0) };
    // Events sorted by time; per bucket the maximum in flight.
    const events: [number, number, keyof typeof out][] = [];
    for (let i = 0; i < ops.length; i++) {
      if (ops.device[i] !== req.deviceId || ops.end[i]! < req.startNs || ops.start[i]! > req.endNs) continue;
      const c = ops.category[i]!;
      const key = c === OpCategory.Compute ? 'kernels' : c === OpCategory.HtoD ? 'h2d' : c === OpCategory.DtoH ? 'd2h' : 'other';
      events.push([ops.start[i]!, 1, key], [ops.end[i]!, -1, key]);
    }
    events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    const now = { kernels: 0, h2d: 0, d2h: 0, other: 0 };
    const bucketOf = (t: number) => Math.min(buckets - 1, Math.max(0, Math.floor((t - req.startNs) / width)));
    let last = req.startNs;
    // Each level holds from one event to the next: every bucket it spans sees it.
    const hold = (until: number) => {
      if (until <= req.startNs || last >= req.endNs) return;
      for (let b = bucketOf(last); b <= bucketOf(Math.min(until, req.endNs) - 1e-9); b++) {
        for (const k of ['kernels', 'h2d', 'd2h', 'other'] as const) if (now[k] > out[k][b]) out[k][b] = now[k];
      }
    };
    for (const [t, d, key] of events) {
      if (t > last) hold(t);
      last = Math.max(last, t);
      now[key] += d;
    }
    return { deviceId: req.deviceId, startNs: req.startNs, endNs: req.endNs, bucketNs: width, ...out };
  }

  details(ref: ItemRef): ItemDetails {
    const tables: Record<string, true> = { kernels: true, memcpys: true, memsets: true, syncs: true, api_calls: true, nvtx_ranges: true };
    if (!tables[ref.table] || !Number.isInteger(ref.id)) throw new ApiError('bad-request', `no such item table '${ref.table}'`);
    const row = this.#db.prepare(`SELECT * FROM ${ref.table} WHERE id = ?`).get(ref.id) as Record<string, FieldValue> | undefined;
    if (!row) throw new ApiError('not-found', `${ref.table} ${ref.id}: no such item`);
    const fields: Record<string, FieldValue> = { ...row };
    const num = (k: string) => Number(row[k] ?? 0);
    let kind: ItemKind = 'kernel';
    let name = '';
    let rowId: RowId = '';
    let pid = num('pid');
    if (ref.table === 'kernels' || ref.table === 'memcpys' || ref.table === 'memsets' || ref.table === 'syncs') {
      rowId = `stream:${row.stream_id}`;
      pid = (this.#db.prepare('SELECT pid FROM contexts WHERE id = ?').pluck().get(row.context_id) as number | undefined) ?? pid;
      fields.stream = this.#streamLabel(num('stream_id'));
    }
    if (ref.table === 'kernels') {
      name = this.#string(num('name_id'));
      fields.name = name;
      fields.grid = `${row.grid_x}×${row.grid_y}×${row.grid_z}`;
      fields.block = `${row.block_x}×${row.block_y}×${row.block_z}`;
    } else if (ref.table === 'memcpys') {
      const cat = categoryOfCopyKind(num('copy_kind'));
      kind = COPY_ITEM_KIND[cat] ?? 'memcpy-other';
      name = `Memcpy ${['compute', 'HtoD', 'DtoH', 'DtoD', 'PtoP', 'HtoH', 'memset', 'other'][cat]}`;
      fields.src = MEMORY_KIND_NAMES[num('src_kind')] ?? null;
      fields.dst = MEMORY_KIND_NAMES[num('dst_kind')] ?? null;
      const d = num('end_ns') - num('start_ns');
      fields['GB/s'] = d > 0 ? Number((num('bytes') / d).toFixed(2)) : null;
    } else if (ref.table === 'memsets') {
      kind = 'memset';
      name = 'Memset';
    } else if (ref.table === 'syncs') {
      kind = 'sync';
      name = ['', 'event synchronize', 'stream wait event', 'stream synchronize', 'context synchronize'][num('sync_type')] ?? 'sync';
    } else if (ref.table === 'api_calls') {
      kind = 'api';
      name = this.#string(num('name_id'));
      rowId = `api:${row.pid}:${row.tid}`;
    } else {
      kind = 'nvtx';
      name = this.#string(num('name_id'));
      rowId = `nvtx:${row.pid}:${row.tid}`;
    }
    const startNs = num('start_ns');
    const endNs = row.end_ns === null ? startNs : num('end_ns');
    fields.duration_ns = endNs - startNs;
    // The launch, both ways: GPU op → its API call(s); API call → its GPU ops.
    const related: ItemDetails['related'] = [];
    if (ref.table !== 'nvtx_ranges') {
      const corr = num('correlation_id');
      const targets: ZonedTable[] = ref.table === 'api_calls' ? ['kernels', 'memcpys', 'memsets'] : ['api_calls'];
      for (const t of targets) {
        for (const r of rowsByCorrelation<Row>(this.#db, t, pid, corr, 'id, start_ns, end_ns')) {
          const d = this.#brief({ table: t, id: r.id! });
          related.push(d);
        }
      }
    }
    return { ref, kind, name, startNs, endNs, durationNs: endNs - startNs, fields, related, rowId };
  }

  #brief(ref: ItemRef): ItemDetails['related'][number] {
    const r = this.#db.prepare(`SELECT * FROM ${ref.table} WHERE id = ?`).get(ref.id) as Row;
    if (ref.table === 'api_calls') {
      return { ref, kind: 'api', name: this.#string(r.name_id!), startNs: r.start_ns!, endNs: r.end_ns!, rowId: `api:${r.pid}:${r.tid}` };
    }
    const kind: ItemKind = ref.table === 'kernels' ? 'kernel' : ref.table === 'memsets' ? 'memset' : COPY_ITEM_KIND[categoryOfCopyKind(r.copy_kind!)] ?? 'memcpy-other';
    const name = ref.table === 'kernels' ? this.#string(r.name_id!) : ref.table === 'memsets' ? 'Memset' : 'Memcpy';
    return { ref, kind, name, startNs: r.start_ns!, endNs: r.end_ns!, rowId: `stream:${r.stream_id}` };
  }

  #streamLabel(id: number): string {
    const s = this.#db.prepare('SELECT cupti_stream_id AS c, flags, priority FROM streams WHERE id = ?').get(id) as { c: number; flags: number; priority: number | null } | undefined;
    return s ? `${s.c} (${streamKind(s.flags)}${s.priority ? `, priority ${s.priority}` : ''})` : String(id);
  }

  search(req: SearchRequest): SearchResponse {
    const limit = Math.max(1, Math.min(1000, req.limit ?? 100));
    const text = `%${req.text.replace(/[%_\\]/g, (c) => `\\${c}`)}%`;
    const names = this.#db.prepare(`SELECT s.id AS nameId, s.value AS name, count(*) AS count, sum(k.end_ns - k.start_ns) AS totalNs
        FROM kernels k JOIN strings s ON s.id = k.name_id WHERE s.value LIKE ? ESCAPE '\\' GROUP BY s.id ORDER BY totalNs DESC`).all(text) as SearchResponse['names'];
    const rows = this.#db.prepare(`SELECT k.id, k.start_ns, k.end_ns, k.name_id, k.stream_id FROM kernels k JOIN strings s ON s.id = k.name_id
        WHERE s.value LIKE ? ESCAPE '\\' ORDER BY k.start_ns LIMIT ?`).all(text, limit) as Row[];
    const total = names.reduce((t, n) => t + n.count, 0);
    return {
      names,
      items: rows.map((r) => ({ ref: { table: 'kernels', id: r.id! }, kind: 'kernel', startNs: r.start_ns!, endNs: r.end_ns!, nameId: r.name_id!, rowId: `stream:${r.stream_id}` })),
      total,
    };
  }

  stats(): StatsResponse {
    const a = this.#analyzed();
    const overlap = overlapByDevice(a.trace);
    const kernels = summarizeKernels(a.trace).map((k) => ({ name: k.name, count: k.count, totalNs: k.total, meanNs: k.mean, minNs: k.min, maxNs: k.max, share: k.share }));
    const copies = summarizeCopies(a.trace).map((c) => ({ direction: c.direction, srcKind: c.srcKind, dstKind: c.dstKind, count: c.count, bytes: c.bytes, totalNs: c.total, gbPerS: c.gigabytesPerSecond ?? 0 }));
    const summary = this.summary();
    const streams = summary.streams.map((s) => {
      const dev = summary.devices.find((d) => d.id === s.deviceId);
      return { rowId: s.rowId, streamId: s.id, deviceId: s.deviceId, busyNs: s.busyNs, utilization: dev && dev.busyNs ? s.busyNs / dev.busyNs : 0,
        kernels: s.counts.kernels, copies: s.counts.memcpys };
    });
    const pairs = a.diagnosis.context.pairs.map((p) => ({ deviceId: p.deviceId, streamIds: p.streamIds, overlapNs: p.overlap }));
    return {
      kernels, copies, streams, overlap: pairs,
      overlapFactors: overlap.filter((o) => o.all.count > 0).map((o) => ({ deviceId: o.deviceId, compute: o.compute.overlapFactor ?? 1, h2d: o.htod.overlapFactor ?? 1, d2h: o.dtoh.overlapFactor ?? 1, all: o.all.overlapFactor ?? 1 })),
    };
  }

  findings(): Finding[] {
    return this.#analyzed().diagnosis.findings;
  }
}
