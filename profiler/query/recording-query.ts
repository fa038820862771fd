// One open recording, answering the data methods of the renderer's API
// (api.ts): summary, windowed timeline rows with level of detail, the
// concurrency track, details of one item with its launch, search, stats and
// findings. The HTTP server (browser mode) and the Electron query worker
// both call this class, so both modes show the same answers.
//
// Read-only: the connection is opened with readonly: true. What is costly
// (the loaded trace and its diagnosis, stats, the summary) is computed once
// per instance and kept while the file does not change. A recording still
// being written (growth.ts) does change: each call then reads one snapshot
// (its statements in one read transaction: the zones and the rows they
// index agree), what grew is computed again, and analyses at a bounded rate
// (LIVE_ANALYSIS_MS).
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import { iterationsOf, pickIterationRange, rangeNames } from '../analysis/diagnosis/iterations.ts';
import { type Iterations, type RangeName } from '../contract/iterations.ts';
import { analyze, loadColumns, type Analysis } from '../analysis/diagnosis/analyze.ts';
import type { ProgressStep } from '../contract/progress.ts';
import { ScopeError } from '../analysis/scope.ts';
import { type TimelineColumns } from '../native/columns.ts';
import { STEADY_STATE, type Scope, type ScopeInfo } from '../contract/scope.ts';
import { loadTrace, type Trace } from '../analysis/trace.ts';
import { loadHost, type Host } from '../analysis/host.ts';
import { exportChromeTrace, type ExportSummary } from '../export/chrome-trace.ts';
import { fullName, type StoredName } from '../contract/names.ts';
import type { Finding } from '../contract/findings.ts';
import { readMeta } from '../store/database.ts';
import { DropSource } from '../store/enums.ts';
import { readProcesses } from '../store/ranks.ts';
import { readProcessOrigins, readSources } from '../store/sources.ts';
import { ZONED_TABLES } from '../store/zone-tables.ts';
import { coverageInZone, itemsInZone, threadLane, zonesInWindow, type ZonedTable, type ZoneSpan } from '../store/zones.ts';
import { ApiError, apiErrorOf } from './api-error.ts';
import { checkValue } from './api-args.ts';
import { WindowRequestSchema } from '../contract/api-schema.ts';
import type {
  ConcurrencyRequest,
  ConcurrencyResponse,
  ItemDependencies,
  ItemDetails,
  ItemKind,
  ItemRef,
  OverviewDevices,
  OverviewResponse,
  RecordingState,
  RecordingSummary,
  RowId,
  SearchRequest,
  SearchResponse,
  StatsResponse,
  StreamInfo,
  TimeRange,
  WaitSpans,
  WaitSpansRequest,
  WindowRequest,
  WindowResponse,
  WindowRow,
} from '../contract/api.ts';
import { concurrencyOf } from './concurrency.ts';
import { Growth } from './growth.ts';
import { kernelLabels } from './kernel-labels.ts';
import { DependencyReader } from './dependencies.ts';
import { ItemDetailsReader } from './item-details.ts';
import { apiRowId, itemKindOf, nvtxRowId, parseRowId, streamKind, streamRowId, type ParsedRow } from './item-kinds.ts';
import { nestingDepths, RowBuilder, zoneIsOneSpan, zoneKinds, type RowLimits } from './level-of-detail.ts';
import { concurrencyFromRows } from './window-concurrency.ts';
import { openReadOnly } from './open-read-only.ts';
import { overviewOf } from './overview.ts';
import { NameSearch } from './search.ts';
import { buildStats } from './stats.ts';
import { SqlConsole } from './sql-console.ts';
import type { SqlAnswer } from '../contract/sql.ts';
import { importedWithoutSyncEvents, NO_SYNC_EVENTS_NOTE } from '../contract/dependencies.ts';
import type { SqlRequest } from '../contract/api-schema.ts';

/** The zones' table ids of GPU operations (kernels, copies, memsets): the streams' busy time and the GPU span. */
const GPU_TABLE_IDS = (['kernels', 'memcpys', 'memsets'] as const).map((t) => ZONED_TABLES[t].id).join(',');
/** Analyses kept per recording: the steady state, the whole, and a few selections. */
const KEEP_ANALYSES = 4;
/** The scopes every page opens on: kept while selections come and go (KEEP_ANALYSES counts them). */
const KEPT_SCOPES: ReadonlySet<string> = new Set([JSON.stringify({ kind: 'steady-state' } satisfies Scope), JSON.stringify({ kind: 'whole' } satisfies Scope)]);

/**
 * While a recording grows, an analysis (and the columns it loads) is
 * redone on the data so far at most this often — and never more often than
 * four times the last one took, so that analysing a long run takes at most
 * a fifth of a core from the machine the target runs on. Asked sooner, the
 * last one is answered again. Once the recording is finished, the next
 * call analyses the final data.
 */
export const LIVE_ANALYSIS_MS = 5000;

/** A value computed from the rows of one revision, and when. */
interface Computed {
  revision: number;
  at: number;
}

/**
 * Pixels a row of a window answer is built at, at most: more than any
 * screen shows (the page asks for three viewports, at up to two pixels per
 * device pixel: a row 10,900 device pixels wide).
 */
export const MAX_ROW_PIXELS = 65_536;
/**
 * Pixels the rows of one window answer share: an answer holds at most about
 * twice as many items and coverage spans (a row's items and the gaps
 * between its spans are each at least a pixel), ~30 MB in binary.
 */
export const WINDOW_PIXELS = 1_048_576;
/** NVTX depth drawn in a row built coarser than asked: deeper ranges are its coverage at this depth. */
export const BOUNDED_NVTX_DEPTH = 16;

/** A row's share of WINDOW_PIXELS, when `rows` rows are built (the rows sent and those asked for a concurrency track). */
function rowShare(rows: number): number {
  return Math.max(1, Math.min(MAX_ROW_PIXELS, Math.floor(WINDOW_PIXELS / Math.max(1, rows))));
}

/** How one row of a window is built: its zones per table, and its resolution and limits when coarser than asked. */
interface RowPlan {
  rowId: RowId;
  row: ParsedRow;
  zones: ZoneSpan[][];
  resolutionNs: number;
  limits: RowLimits | undefined;
}

/**
 * A row with no more stored rows in the window than its share of pixels is
 * built as asked (each item or coverage span holds at least one of them);
 * a denser one at no finer than the window over its share, with at most
 * that many items (a row whose items overlap) and nesting shown to
 * BOUNDED_NVTX_DEPTH.
 */
function planRow(db: Database, rowId: RowId, req: WindowRequest, share: number): RowPlan {
  const row = parseRowId(rowId);
  const zones = row.tables.map((table) => zonesInWindow(db, table, row.lane, req.startNs, req.endNs));
  let stored = 0;
  for (const zs of zones) for (const z of zs) stored += z.rows;
  const finest = (req.endNs - req.startNs) / share;
  if (stored <= share || req.resolutionNs >= finest) return { rowId, row, zones, resolutionNs: req.resolutionNs, limits: undefined };
  return { rowId, row, zones, resolutionNs: finest, limits: { maxItems: share + 1, maxDepth: BOUNDED_NVTX_DEPTH } };
}

/** What a row's items are read as (select lists over the table aliased `t`, zones.ts). */
// Always four: id, start, end, then the name id, or the copy kind for memcpys (else NULL).
const ITEM_COLUMNS: Record<ZonedTable, string> = {
  kernels: 'id, start_ns, end_ns, name_id',
  memcpys: 'id, start_ns, end_ns, copy_kind',
  memsets: 'id, start_ns, end_ns, NULL',
  syncs: 'id, start_ns, end_ns, NULL',
  api_calls: 'id, start_ns, end_ns, name_id',
  nvtx_ranges: 'id, start_ns, coalesce(t.end_ns, t.start_ns) AS end_ns, name_id',
};

type ItemRow = [id: number, start: number, end: number, nameOrCopyKind: number | null];

/** A row's work in the window before level of detail: a stored item, or a run of sub-pixel ones already summed by the store. */
type Piece =
  { ref: ItemRef; kind: ItemKind; start: number; end: number; nameId: number } | { ref: null; kind: ItemKind; start: number; end: number; count: number };

const DROP_REASONS: Record<number, string> = {
  [DropSource.Cupti]: 'CUPTI dropped activity records',
  [DropSource.BufferCap]: "the collector's buffer pool was at its cap (refused buffer requests)",
  [DropSource.Writer]: 'records were lost to write errors',
  [DropSource.Incomplete]: 'records without GPU timestamps (still in flight at the last flush) were left out',
};

export class RecordingQuery {
  readonly recordingId: string;
  readonly path: string;
  readonly #db: Database;
  readonly #details: ItemDetailsReader;
  #search: NameSearch;
  readonly #dependencies: DependencyReader;
  /** Analyses by scope (JSON of the Scope), least recently used first; each with its stats once asked. */
  readonly #analyses = new Map<string, { analysis: Analysis; stats?: StatsResponse } & Computed>();
  #columns: (TimelineColumns & Computed) | null = null;
  #wholeTrace: Trace | null = null;
  #wholeHost: Host | null = null;
  #summary: RecordingSummary | null = null;
  #state: Omit<RecordingState, 'live' | 'revision'> | null = null;
  readonly #names = new Map<number, StoredName>();
  /** The recording's kernel labels (kernelLabels), redone as the analyses are while it grows (#usable). */
  #kernelLabels: (Map<number, string> & Computed) | null = null;
  /** The SQL console's own read-only connection, opened by the first query (sql-console.ts). */
  #sql: SqlConsole | null = null;
  readonly #growth: Growth;
  readonly #liveAnalysisMs: number;
  /** How long the last analysis (or column load) of the growing recording took. */
  #lastAnalysisMs = 0;
  readonly #onProgress: ((step: ProgressStep) => void) | undefined;
  /** The file's error, once an analysis of it on another thread refused it (refuse): every later answer is that error. */
  #refused: ApiError | null = null;

  /**
   * Opens `file` read-only; throws ApiError (not-found, not-a-recording, corrupt, locked, newer-schema) naming it.
   * `liveAnalysisMs`: LIVE_ANALYSIS_MS, which tests change. `onProgress`: told the phases of each
   * analysis as they begin (analysis-worker.ts passes them to the page: contract/progress.ts).
   */
  constructor(recordingId: string, file: string, opts: { liveAnalysisMs?: number; onProgress?: (step: ProgressStep) => void } = {}) {
    this.recordingId = recordingId;
    this.path = path.resolve(file);
    this.#db = openReadOnly(this.path);
    this.#details = new ItemDetailsReader(this.#db, (id) => this.#name(id));
    this.#search = new NameSearch(this.#db);
    this.#dependencies = new DependencyReader(this.#db, () => this.#whole());
    this.#growth = this.#guard(() => new Growth(this.#db));
    this.#liveAnalysisMs = opts.liveAnalysisMs ?? LIVE_ANALYSIS_MS;
    this.#onProgress = opts.onProgress;
  }

  /** Whether the file is still being written (its recorder runs). */
  beingWritten(): boolean {
    return this.#guard(() => this.#read(() => this.#growth.following));
  }

  /**
   * `fn` on one snapshot of a recording that may change: one read
   * transaction (a few milliseconds: the recorder's next commit waits for
   * it), at whose start what changed since the last call is dropped. A
   * finished recording is read as it always was.
   */
  #read<T>(fn: () => T): T {
    if (!this.#growth.following || this.#db.inTransaction) return fn();
    this.#db.exec('BEGIN');
    try {
      if (this.#growth.changed()) this.#grew();
      return fn();
    } finally {
      if (this.#db.inTransaction) this.#db.exec('COMMIT');
    }
  }

  /** Takes in what changed since the last call (a short snapshot of its own), for work that reads outside one. */
  #sync(): void {
    this.#read(() => undefined);
  }

  /** The file grew: what was computed from its rows is redone when next asked (analyses and columns at a bounded rate: #usable). */
  #grew(): void {
    this.#summary = null;
    this.#state = null;
    this.#wholeTrace = null;
    this.#wholeHost = null;
    this.#search = new NameSearch(this.#db);
  }

  /**
   * Whether a value computed from an earlier revision may still be used:
   * while the recording grows, until LIVE_ANALYSIS_MS (or four times the
   * last analysis) has passed; once it is finished, never.
   */
  #usable(c: Computed): boolean {
    if (c.revision === this.#growth.revision) return true;
    if (!this.#growth.following) return false;
    return performance.now() - c.at < Math.max(this.#liveAnalysisMs, 4 * this.#lastAnalysisMs);
  }

  /** The timeline's columns (natively loaded), loaded again when stale (#usable). */
  #timelineColumns(): TimelineColumns {
    this.#sync();
    if (!this.#columns || !this.#usable(this.#columns)) {
      this.#columns = this.#computed(() => loadColumns(this.#db, this.#onProgress));
      this.#wholeTrace = null;
      this.#wholeHost = null;
    }
    return this.#columns;
  }

  /** `fn`'s value stamped with the revision it read (taken before: it may read newer rows, never older) and timed. */
  #computed<T extends object>(fn: () => T): T & Computed {
    this.#sync();
    const revision = this.#growth.revision;
    const t0 = performance.now();
    const value = fn();
    const at = performance.now();
    if (this.#growth.following) this.#lastAnalysisMs = at - t0;
    return Object.assign(value, { revision, at });
  }

  close(): void {
    this.#sql?.close();
    this.#db.close();
  }

  /**
   * The analysis thread (its own RecordingQuery of this file) refused the
   * file, a row in it no writer stores (store/row-checks.ts): from now on
   * this one answers that error too, rather than draw rows the analysis
   * would not read.
   */
  refuse(err: ApiError): void {
    this.#refused = err;
  }

  /**
   * Runs one API method; a SQLite error met halfway (a file truncated
   * behind our back, a writer holding a lock) becomes an ApiError that
   * names this recording.
   */
  #guard<T>(fn: () => T): T {
    if (this.#refused) throw this.#refused;
    try {
      return fn();
    } catch (err) {
      throw apiErrorOf(err, this.path);
    }
  }

  /**
   * The analysis of `scope`, computed once and kept among the last few (a
   * selection dragged on the ruler is a new scope each time; the columns
   * are read from the file once and shared by all of them). A scope the
   * recording does not have is a 'bad-request' naming it.
   */
  #entry(scope: Scope): { analysis: Analysis; stats?: StatsResponse } {
    const key = JSON.stringify(scope);
    this.#sync();
    let e = this.#analyses.get(key);
    if (e && this.#usable(e)) {
      this.#analyses.delete(key);
    } else {
      this.#analyses.delete(key);
      try {
        e = this.#computed(() => ({
          analysis: analyze(this.#db, { scope, columns: this.#timelineColumns(), file: this.path, onProgress: this.#onProgress }),
        }));
      } catch (err) {
        if (err instanceof ScopeError) throw new ApiError('bad-request', err.message, this.path);
        throw err;
      }
    }
    this.#analyses.set(key, e);
    // The least recently used selection goes first: a page that drags ranges on the ruler (or many
    // pages at once, in browser mode) must not push out the steady state every page opens on.
    while (this.#analyses.size > KEEP_ANALYSES) {
      const keys = [...this.#analyses.keys()];
      this.#analyses.delete(keys.find((k) => !KEPT_SCOPES.has(k)) ?? keys[0]!);
    }
    return e;
  }

  #analyzed(scope: Scope = STEADY_STATE): Analysis {
    return this.#entry(scope).analysis;
  }

  /** Every operation (concurrency tracks are drawn for the whole timeline, whatever the findings' scope). */
  #trace(): Trace {
    if (!this.#wholeTrace) {
      // The whole-recording analysis's trace when there is one; else the trace alone (no diagnosis).
      const entry = this.#analyses.get(JSON.stringify({ kind: 'whole' } satisfies Scope));
      const whole = entry && entry.revision === this.#columns?.revision ? entry.analysis.trace : null;
      const columns = whole ? null : this.#timelineColumns();
      this.#wholeTrace = whole ?? loadTrace(this.#db, columns!.ops, columns!.calls);
    }
    return this.#wholeTrace;
  }

  /** Every operation and API call (the dependency view follows dependencies across any scope). */
  #whole(): { trace: Trace; host: Host } {
    const trace = this.#trace();
    if (!this.#wholeHost) {
      const whole = this.#analyses.get(JSON.stringify({ kind: 'whole' } satisfies Scope))?.analysis;
      this.#wholeHost = whole?.trace === trace ? whole.host : loadHost(this.#db, trace.ops, this.#timelineColumns().calls);
    }
    return { trace, host: this.#wholeHost };
  }

  /** A strings row: its value and demangled form, read once. */
  #name(id: number | null | undefined): StoredName {
    if (id === null || id === undefined) return { name: '', demangledName: null };
    let s = this.#names.get(id);
    if (s === undefined) {
      const row = this.#db.prepare('SELECT value, demangled FROM strings WHERE id = ?').raw().get(id) as [string, string | null] | undefined;
      s = { name: row?.[0] ?? `#${id}`, demangledName: row?.[1] ?? null };
      this.#names.set(id, s);
    }
    return s;
  }

  /**
   * What the timeline needs first, from the zones and SQL aggregates only:
   * opening a recording must not wait for a pass over all its rows in JS.
   */
  summary(): RecordingSummary {
    return this.#guard(() => this.#read(() => (this.#summary ??= summaryOf(this.#db, this.recordingId, this.path, this.#growth.following))));
  }

  /** Whether the recording is being written, and how far it has got: zones and meta only (RecordingState). */
  recordingState(): RecordingState {
    return this.#guard(() =>
      this.#read(() => {
        if (!this.#state) {
          const counts = { kernels: 0, memcpys: 0, memsets: 0, syncs: 0, apiCalls: 0, nvtxRanges: 0 };
          const key: Record<number, keyof typeof counts> = {};
          for (const [table, k] of [
            ['kernels', 'kernels'],
            ['memcpys', 'memcpys'],
            ['memsets', 'memsets'],
            ['syncs', 'syncs'],
            ['api_calls', 'apiCalls'],
            ['nvtx_ranges', 'nvtxRanges'],
          ] as const)
            key[ZONED_TABLES[table].id] = k;
          let startNs: number | null = null;
          let endNs: number | null = null;
          for (const z of this.#db.prepare('SELECT table_id AS t, sum(rows) AS n, min(start_ns) AS s, max(end_ns) AS e FROM zones GROUP BY 1').all() as {
            t: number;
            n: number;
            s: number;
            e: number;
          }[]) {
            if (key[z.t]) counts[key[z.t]!] = z.n;
            startNs = startNs === null ? z.s : Math.min(startNs, z.s);
            endNs = endNs === null ? z.e : Math.max(endNs, z.e);
          }
          const complete = (this.#db.prepare("SELECT value FROM meta WHERE key = 'complete'").pluck().get() as string | undefined) === '1';
          this.#state = { complete, startNs: startNs ?? 0, endNs: endNs ?? 0, counts };
        }
        return { ...this.#state, live: this.#growth.following, revision: this.#growth.revision };
      }),
    );
  }

  /**
   * Items of each row in [startNs, endNs], with level of detail (see
   * level-of-detail.ts). A zone narrower than a pixel becomes coverage
   * without its rows being read; a dense zone (more rows than pixels) is
   * summed per pixel inside SQLite, and only its items of a pixel or more
   * come as rows. That keeps a whole-recording view of millions of
   * operations bounded by pixels, in work as in answer size — as long as
   * the pixels are: a row holding more stored rows in the window than its
   * share of WINDOW_PIXELS (windowPlan) is built at no finer than the
   * window over that share, whatever resolution was asked (one asked at
   * 1 ns over 10^6 kernels ran 110 s, grew to 4.9 GB and answered 223 MB),
   * and says so (WindowRow.resolutionNs, WindowResponse.bounded).
   */
  window(req: WindowRequest): WindowResponse {
    checkWindowRequest(req);
    return this.#guard(() =>
      this.#read(() => {
        const nameIds = new Set<number>();
        // Every row built shares the pixels: those sent, and those asked for a concurrency track only.
        const share = rowShare(new Set([...req.rows, ...(req.concurrency ?? []).flatMap((c) => c.rows)]).size);
        const plans = new Map<RowId, RowPlan>();
        const planOf = (rowId: RowId) => {
          let p = plans.get(rowId);
          if (!p) plans.set(rowId, (p = planRow(this.#db, rowId, req, share)));
          return p;
        };
        const rows = req.rows.map((rowId) => this.#windowRow(planOf(rowId), req, nameIds));
        const strings: Record<number, string> = {};
        const labels: Record<number, string> = {};
        if (!this.#kernelLabels || !this.#usable(this.#kernelLabels)) this.#kernelLabels = this.#computed(() => kernelLabels(this.#db));
        for (const id of nameIds) {
          strings[id] = fullName(this.#name(id));
          const label = this.#kernelLabels.get(id);
          if (label !== undefined) labels[id] = label;
        }
        const coarser = rows.filter((r) => r.resolutionNs !== undefined).length;
        const bounded = coarser
          ? {
              bounded: `${coarser} of ${rows.length} row(s) built coarser than asked: more operations in the window than pixels (at most ${MAX_ROW_PIXELS.toLocaleString('en-US')} a row, ${WINDOW_PIXELS.toLocaleString('en-US')} shared by the rows asked)`,
            }
          : {};
        const base = { startNs: req.startNs, endNs: req.endNs, rows, strings, kernelLabels: labels, ...bounded };
        if (!req.concurrency) return base;
        // The tracks from the same rows, here rather than in the page: for a
        // window of ~250 k items the sweep takes tens of ms, which the page's
        // main thread cannot spare while panning. Rows asked only for a track
        // (hidden streams) are built but not sent.
        const built = new Map(rows.map((r) => [r.rowId, r]));
        const concurrency = req.concurrency.map((c) => {
          const deviceRows = c.rows.map((rowId) => built.get(rowId) ?? this.#windowRow(planOf(rowId), req, new Set()));
          for (const r of deviceRows) built.set(r.rowId, r);
          return concurrencyFromRows(c.deviceId, deviceRows, req.startNs, req.endNs, c.buckets);
        });
        return { ...base, concurrency };
      }),
    );
  }

  #windowRow(plan: RowPlan, req: WindowRequest, nameIds: Set<number>): WindowRow {
    const { rowId, row, zones } = plan;
    const lod = new RowBuilder(plan.resolutionNs, plan.limits);
    const res = lod.resolutionNs;
    const window = { startNs: req.startNs, endNs: req.endNs };
    const nested = row.type === 'nvtx';
    const pieces: Piece[] = [];
    row.tables.forEach((table, t) => {
      for (const z of zones[t]!) {
        // NVTX rows need every range for their nesting depth: never summed.
        if (!nested && zoneIsOneSpan(z, window, res)) {
          for (const [copyKind, count] of zoneKinds(table, z))
            pieces.push({ ref: null, kind: itemKindOf(table, { copy_kind: copyKind }), start: z.startNs, end: z.endNs, count });
          continue;
        }
        const visible = Math.min(z.endNs, req.endNs) - Math.max(z.startNs, req.startNs);
        const dense = !nested && z.rows > 2 * (visible / res);
        if (dense) {
          for (const c of coverageInZone(this.#db, table, row.lane, z, req.startNs, req.endNs, req.startNs, res)) {
            pieces.push({ ref: null, kind: itemKindOf(table, { copy_kind: c.copyKind }), start: c.startNs, end: c.endNs, count: c.count });
          }
          // No row of the zone is a pixel long: the coverage was all of it.
          if (z.maxDurNs !== null && z.maxDurNs < res) continue;
        }
        const copies = table === 'memcpys';
        const fixedKind = copies ? null : itemKindOf(table, {});
        for (const r of itemsInZone(this.#db, table, row.lane, z, req.startNs, req.endNs, ITEM_COLUMNS[table], dense ? res : 0) as ItemRow[]) {
          pieces.push({
            ref: { table, id: r[0] },
            kind: fixedKind ?? itemKindOf(table, { copy_kind: r[3] }),
            start: r[1],
            end: r[2],
            nameId: copies ? 0 : (r[3] ?? 0),
          });
        }
      }
    });
    // Start order across tables and zones; on equal starts the longer first (the enclosing NVTX range).
    pieces.sort((x, y) => x.start - y.start || y.end - x.end);
    const depths = nested ? nestingDepths(pieces) : null;
    pieces.forEach((p, i) => {
      const depth = depths?.[i];
      if (p.ref === null) lod.cover(p.kind, p.start, p.end, p.count, depth);
      else if (lod.item(p.ref, p.kind, p.start, p.end, p.nameId, depth) && p.nameId) nameIds.add(p.nameId);
    });
    return { rowId, items: lod.items, coverage: lod.coverage(), ...(plan.limits ? { resolutionNs: res } : {}) };
  }

  concurrency(req: ConcurrencyRequest): ConcurrencyResponse {
    if (![req?.deviceId, req?.startNs, req?.endNs, req?.buckets].every(Number.isFinite)) {
      throw new ApiError('bad-request', 'concurrency needs finite deviceId, startNs, endNs and buckets');
    }
    return this.#guard(() => concurrencyOf(this.#trace(), req));
  }

  /** The minimap of the whole recording, or the GPU busy over `range` (overview.ts): zones only. */
  overview(buckets: number, range: TimeRange | null = null, devices: OverviewDevices | null = null): OverviewResponse {
    return this.#guard(() =>
      this.#read(() => {
        const s = range ?? this.summary();
        return overviewOf(this.#db, s.startNs, s.endNs, buckets, devices);
      }),
    );
  }

  details(ref: ItemRef): ItemDetails {
    return this.#guard(() => this.#read(() => this.#details.details(ref)));
  }

  // Not one snapshot: a search of ten million rows may take a second, which
  // the recorder's commits would wait out. Rows are only ever appended
  // while a recording grows, so its statements see the same rows or more.
  search(req: SearchRequest): SearchResponse {
    return this.#guard(() => {
      this.#sync();
      return this.#search.search(req);
    });
  }

  /** What an item waited for, what waited for it, its critical chain (dependencies.ts). */
  dependencies(ref: ItemRef): ItemDependencies {
    return this.#guard(() => this.#dependencies.item(ref));
  }

  /** The spans event waits held operations' starts on stream rows over a window. */
  waitSpans(req: WaitSpansRequest): WaitSpans {
    return this.#guard(() => this.#dependencies.waitSpans(req));
  }

  stats(scope: Scope = STEADY_STATE): StatsResponse {
    return this.#guard(() => {
      const e = this.#entry(scope);
      return (e.stats ??= buildStats(e.analysis));
    });
  }

  /** One read-only SQL query (sql-console.ts), on a connection of its own: the query cannot touch this one's state. */
  sql(request: SqlRequest): SqlAnswer {
    this.#sql ??= new SqlConsole(this.path);
    return this.#sql.run(request.query, { timeoutMs: request.timeoutMs, rowLimit: request.rowLimit });
  }

  /**
   * Writes the recording as Chrome trace JSON to `out` (File ▸ Export…),
   * replacing a file there: the save dialog asked first. Never the
   * recording itself (store/output-file.ts).
   */
  exportTrace(out: string): Promise<ExportSummary> {
    return exportChromeTrace(this.#db, out, { overwrite: true });
  }

  /** The loaded recording and its diagnosis on `scope` (kept among the last few). */
  analysis(scope: Scope = STEADY_STATE): Analysis {
    return this.#guard(() => this.#analyzed(scope));
  }

  findings(scope: Scope = STEADY_STATE): Finding[] {
    return this.#guard(() => this.#analyzed(scope).diagnosis.findings);
  }

  scopeInfo(scope: Scope = STEADY_STATE): ScopeInfo {
    return this.#guard(() => this.#analyzed(scope).scope);
  }

  ranges(): RangeName[] {
    return this.#guard(() => this.#read(() => rangeNames(this.#db)));
  }

  /** Per instance of `name` (null: the repeating range covering most time); null when nothing repeats. `findings`: each instance's top finding too (iterationsOf). */
  iterations(name: string | null, findings = true): Iterations | null {
    return this.#guard(() => {
      const picked = name ?? pickIterationRange(this.#db);
      if (picked === null) return null;
      return iterationsOf(this.#db, this.#timelineColumns(), picked, name === null ? 'picked' : 'named', findings);
    });
  }
}

/**
 * What the timeline needs first of the recording open as `db`, from the
 * zones and SQL aggregates only (RecordingQuery.summary); `following`: it is
 * being written (no warning that it is unfinished). Also each rank's file of
 * a job opened from its ranks' summaries (job-query.ts), placed on the job's
 * ids and clock there.
 */
export function summaryOf(db: Database, recordingId: string, file: string, following: boolean): RecordingSummary {
  const meta = Object.fromEntries(readMeta(db));
  // Rows per table and lane, from the zones (no item row is read).
  const laneRows = new Map<string, number>();
  const tableRows = new Map<number, number>();
  for (const z of db.prepare('SELECT table_id AS t, lane, sum(rows) AS n FROM zones GROUP BY 1, 2').all() as { t: number; lane: number; n: number }[]) {
    laneRows.set(`${z.t}:${z.lane}`, z.n);
    tableRows.set(z.t, (tableRows.get(z.t) ?? 0) + z.n);
  }
  const rowsOf = (table: ZonedTable, lane: number) => laneRows.get(`${ZONED_TABLES[table].id}:${lane}`) ?? 0;
  const total = (table: ZonedTable) => tableRows.get(ZONED_TABLES[table].id) ?? 0;
  // Busy time per stream: operations of one stream run one at a time, so a
  // sum, which the zones hold per block of rows (schema 5): a few thousand
  // zone rows instead of every operation.
  const busy = new Map<number, number>();
  for (const r of db.prepare(`SELECT lane AS s, sum(busy_ns) AS b FROM zones WHERE table_id IN (${GPU_TABLE_IDS}) GROUP BY lane`).all() as {
    s: number;
    b: number;
  }[]) {
    busy.set(r.s, r.b);
  }
  const deviceRows = db
    .prepare(
      `SELECT id, name, uuid, ordinal, cc_major AS ccMajor, cc_minor AS ccMinor, sm_count AS smCount,
        async_engine_count AS asyncEngineCount, total_memory_bytes AS totalMemoryBytes FROM devices ORDER BY id`,
    )
    .all() as Omit<RecordingSummary['devices'][number], 'busyNs'>[];
  const streamRows = db
    .prepare(
      `SELECT id, pid, device_id AS deviceId, context_id AS contextId, cupti_stream_id AS cuptiStreamId, flags, priority
        FROM streams ORDER BY device_id, cupti_stream_id`,
    )
    .all() as { id: number; pid: number; deviceId: number | null; contextId: number; cuptiStreamId: number; flags: number; priority: number | null }[];
  // A device's work time: the sum over its streams (api.ts DeviceInfo.busyNs).
  const deviceBusy = new Map<number, number>();
  for (const st of streamRows) if (st.deviceId !== null) deviceBusy.set(st.deviceId, (deviceBusy.get(st.deviceId) ?? 0) + (busy.get(st.id) ?? 0));
  const streams: StreamInfo[] = [];
  for (const st of streamRows) {
    const counts = { kernels: rowsOf('kernels', st.id), memcpys: rowsOf('memcpys', st.id), memsets: rowsOf('memsets', st.id), syncs: rowsOf('syncs', st.id) };
    if (counts.kernels + counts.memcpys + counts.memsets + counts.syncs === 0) continue; // a stream created and never used has no row
    const b = busy.get(st.id) ?? 0;
    const dev = st.deviceId !== null ? (deviceBusy.get(st.deviceId) ?? 0) : 0;
    streams.push({
      rowId: streamRowId(st.id),
      id: st.id,
      pid: st.pid,
      deviceId: st.deviceId,
      contextId: st.contextId,
      cuptiStreamId: st.cuptiStreamId,
      kind: streamKind(st.flags),
      priority: st.priority,
      busyNs: b,
      shareOfDevice: dev > 0 ? b / dev : 0,
      counts,
    });
  }
  const threads = (db.prepare('SELECT pid, tid, name FROM threads ORDER BY pid, tid').all() as { pid: number; tid: number; name: string | null }[])
    .map((t) => ({
      ...t,
      apiRowId: apiRowId(t.pid, t.tid),
      nvtxRowId: nvtxRowId(t.pid, t.tid),
      apiCalls: rowsOf('api_calls', threadLane(t.pid, t.tid)),
      nvtxRanges: rowsOf('nvtx_ranges', threadLane(t.pid, t.tid)),
    }))
    .filter((t) => t.apiCalls + t.nvtxRanges > 0);
  const processRows = readProcesses(db);
  const origins = readProcessOrigins(db);
  const processes = processRows.map((p) => ({
    ...p,
    threads: threads.filter((t) => t.pid === p.pid),
    sourceId: origins.get(p.pid)?.sourceId ?? null,
    originalPid: origins.get(p.pid)?.originalPid ?? null,
  }));
  const sources = readSources(db);
  // Every item's span and the GPU operations' alone, in one pass over the zones.
  const span = db
    .prepare(
      `SELECT min(start_ns) AS s, max(end_ns) AS e,
          min(CASE WHEN table_id IN (${GPU_TABLE_IDS}) THEN start_ns END) AS gs, max(CASE WHEN table_id IN (${GPU_TABLE_IDS}) THEN end_ns END) AS ge
        FROM zones`,
    )
    .get() as { s: number | null; e: number | null; gs: number | null; ge: number | null };
  const complete = meta.complete === '1';
  return {
    recordingId,
    name: path.basename(file),
    path: file,
    schemaVersion: db.pragma('user_version', { simple: true }) as number,
    complete,
    incompleteReason: complete ? null : (meta.incomplete_reason ?? null),
    meta,
    startNs: span.s ?? 0,
    endNs: span.e ?? 0,
    gpuSpan: span.gs !== null && span.ge !== null ? { startNs: span.gs, endNs: span.ge } : null,
    devices: deviceRows.map((d) => ({ ...d, busyNs: deviceBusy.get(d.id) ?? 0 })),
    processes,
    streams,
    counts: {
      kernels: total('kernels'),
      memcpys: total('memcpys'),
      memsets: total('memsets'),
      syncs: total('syncs'),
      apiCalls: total('api_calls'),
      nvtxRanges: total('nvtx_ranges'),
    },
    warnings: summaryWarnings(db, following, complete, meta, processRows, total('kernels') + total('memcpys') + total('memsets')),
    job: sources.length ? { sources } : null,
  };
}

/** What the user must know before trusting the numbers: incomplete, dropped, collector trouble. */
function summaryWarnings(
  db: Database,
  following: boolean,
  complete: boolean,
  meta: Record<string, string>,
  processes: { pid: number; command: string | null; complete: boolean }[],
  gpuOps: number,
): string[] {
  const warnings: string[] = [];
  // Being recorded: unfinished as a matter of course (the page says it is live).
  if (following) return warnings;
  if (!complete) warnings.push(`incomplete recording: ${meta.incomplete_reason ?? 'it was not finished'}; what arrived is shown`);
  // A PyTorch trace taken without cuda_sync events: the timeline draws no event waits, and says why and how to get them
  // (where there was GPU work to wait for, as the importer's note).
  if (importedWithoutSyncEvents(meta) && gpuOps > 0) warnings.push(`imported PyTorch profiler trace: ${NO_SYNC_EVENTS_NOTE}`);
  for (const p of processes) {
    if (!p.complete) warnings.push(`process ${p.pid}${p.command ? ` (${p.command})` : ''} did not end its stream: its last records may be missing`);
  }
  for (const d of db.prepare('SELECT source, pid, sum(count) AS n FROM dropped_records GROUP BY source, pid HAVING n > 0 ORDER BY pid, source').all() as {
    source: number;
    pid: number;
    n: number;
  }[]) {
    warnings.push(
      `process ${d.pid}: ${d.n.toLocaleString('en-US')} × ${DROP_REASONS[d.source] ?? `records dropped (source ${d.source})`}: counts and times are lower bounds`,
    );
  }
  for (const e of db.prepare('SELECT pid, message FROM collector_errors ORDER BY id').all() as { pid: number; message: string }[]) {
    warnings.push(`collector error in process ${e.pid}: ${e.message}`);
  }
  return warnings;
}

/** The API's own check (contract/api-schema.ts), for callers inside the process that skipped checkArguments. */
function checkWindowRequest(req: WindowRequest): void {
  checkValue('window', 'request', WindowRequestSchema, req);
}
