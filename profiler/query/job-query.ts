// A job of rank files on the timeline without merging them (issue 29): the
// page's first view of a job — every rank folded to one GPU-busy row on the
// job's aligned clock — from each rank's summary and zones, and one rank's
// detail from that rank's own file, opened when the page asks for its rows.
// Merging 1,024 ranks of 100,000 operations (7.9 GiB) into one file took
// minutes; this reads each file's summary, small tables and zones once
// (a few ms each) and keeps a few hundred bytes a rank.
//
// Each rank is placed as merge places recordings (job/of-summaries.ts
// placeSummaries: clocks aligned by the collectives' end times in the
// summaries, ids planned by merge/plan.ts), so its pids, GPUs, streams and
// rows have the ids the merged recording of the same files in the same order
// has, and its times are its own plus its shift. A window of stream or
// thread rows is answered by the ranks' own files (RecordingQuery, a few
// kept open), each asked for the window moved onto its clock, the answer
// moved back. Names are numbered by the job (one id per distinct name
// across ranks), not as a merge would number them.
//
// The job's findings are the job report's, from the same summaries, on the
// analysis thread (job-analysis.ts); its iterations too (each rank's steps,
// kept in its summary: job/iterations.ts). What needs every rank's rows — stats,
// search, dependencies, SQL, export — is not answered: each says where it
// is (`streamscope report` of the files; a rank's own file; or the job
// merged, `--job-view merged`).
import path from 'node:path';
import type {
  ItemDetails,
  ItemRef,
  OverviewDevices,
  OverviewResponse,
  RecordingState,
  RecordingSummary,
  RowId,
  TimeRange,
  WindowRequest,
  WindowResponse,
  WindowRow,
} from '../contract/api.ts';
import { WindowRequestSchema } from '../contract/api-schema.ts';
import type { Iterations, JobIterations } from '../contract/iterations.ts';
import type { JobSource } from '../contract/job.ts';
export { jobViewOf, type JobView } from '../contract/job.ts';
import { jobIterations } from '../job/iterations.ts';
import { placeSummaries, type PlacedSummary, type Placement } from '../job/of-summaries.ts';
import { summarizeFiles } from '../job/summarize.ts';
import { storedSummary, type RankSummary } from '../job/summary.ts';
import type { InputPlan } from '../merge/plan.ts';
import Database from 'better-sqlite3';
import { openRecording, type Db } from '../store/database.ts';
import { latestSchemaVersion } from '../store/migrations/index.ts';
import { readRankSummaries, STEPS_ROW } from '../store/rank-summary.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { checkValue } from './api-args.ts';
import { ApiError, apiErrorOf } from './api-error.ts';
import { apiRowId, nvtxRowId, parseRowId, streamRowId } from './item-kinds.ts';
import { gpuZones, overviewOfZones, type GpuZone } from './overview.ts';
import { RecordingQuery, summaryOf } from './recording-query.ts';

/** Ranks' files kept open for their detail: those whose rows the page asked for last. */
const OPEN_RANKS = 8;

/** One rank's file on the job: where its ids and times land. */
interface Rank {
  file: string;
  shift: number;
  plan: InputPlan;
  /** The job's pid → the file's. */
  localPid: Map<number, number>;
  /** The job's device id → the file's (its devices only). */
  localDevice: Map<number, number>;
}

/** What one file gives the job's first view, in its own ids and clock. */
export interface RankFacts {
  summary: RecordingSummary;
  zones: GpuZone[];
}

/** What the job view reads of one rank's file open as `db`: its facts, and its stored summary placed (null: none current). */
export interface RankRead {
  facts: RankFacts;
  placed: ViewedSummary | null;
}

/** What the job view keeps of a rank's summary: where it lands on the job, and its steps (the iterations row). */
type ViewedSummary = PlacedSummary & Pick<RankSummary, 'iterations' | 'processes'>;

export function readRank(db: Db, file: string): RankRead {
  // The steps too, stored apart (STEPS_ROW): the view draws every rank's iterations row as it opens. Read here, as the
  // rest: this may be an open worker's thread, whose answer is copied to the view's.
  const stored = readRankSummaries(db, ['whole', STEPS_ROW]);
  const summary = summaryOf(db, '', file, false);
  return {
    facts: { summary, zones: gpuZones(db) },
    placed:
      stored &&
      placed(
        storedSummary(stored[0]!, () => JSON.parse(stored[1]!) as Iterations | null),
        file,
        summary,
      ),
  };
}

/** The tables whose ids a merge renumbers as runs (merge/plan.ts ID_TABLES) that items live in. */
const ITEM_ID_TABLE: Record<ItemRef['table'], string> = {
  kernels: 'kernels',
  memcpys: 'memcpys',
  memsets: 'memsets',
  syncs: 'syncs',
  api_calls: 'api_calls',
  nvtx_ranges: 'nvtx_ranges',
};

export class JobQuery {
  readonly recordingId: string;
  /** The first file's (the clock's reference): a job has no file of its own. */
  readonly path: string;
  readonly name: string;
  readonly files: readonly string[];
  /** Files whose summary was built for this view (none was stored, or it was not current). */
  readonly summarized: string[];
  readonly #ranks: Rank[] = [];
  readonly #summary: RecordingSummary;
  /** Every rank's GPU zones, on the job's clock and devices (the folded rows' overview). */
  readonly #zones: GpuZone[] = [];
  /** The job's stream id → its rank; pid → its rank. */
  readonly #rankOfStream = new Map<number, number>();
  readonly #rankOfPid = new Map<number, number>();
  /** Names by value → the job's id, and each rank's string id → the job's. */
  readonly #nameIds = new Map<string, number>();
  readonly #rankNames = new Map<number, Map<number, number>>();
  /** Ranks' files open for their detail, least recently used first. */
  readonly #open = new Map<number, RecordingQuery>();
  /** Each rank's steps and where its rows land (jobIterations); the job's iterations once asked (null: none repeat). */
  readonly #steps: Pick<RankSummary, 'file' | 'iterations' | 'processes'>[];
  readonly #placement: Pick<Placement, 'shifts' | 'plans'>;
  #iterations: JobIterations | null | undefined;

  private constructor(recordingId: string, files: readonly string[], facts: RankFacts[], summaries: ViewedSummary[], summarized: string[]) {
    this.recordingId = recordingId;
    this.files = files;
    this.path = files[0]!;
    this.summarized = summarized;
    const n = files.length;
    this.name = `job of ${n} recordings (${path.basename(files[0]!)} … ${path.basename(files[n - 1]!)})`;
    const { alignment, shifts, plans } = placeSummaries(summaries);
    this.#steps = summaries.map(({ file, iterations, processes }) => ({ file, iterations, processes }));
    this.#placement = { shifts, plans };
    files.forEach((file, i) => {
      const plan = plans[i]!;
      this.#ranks.push({
        file,
        shift: shifts[i]!,
        plan,
        localPid: new Map([...plan.pids].map(([local, job]) => [job, local])),
        localDevice: new Map([...plan.devices].map(([local, job]) => [job, local])),
      });
    });
    const sources: JobSource[] = files.map((file, i) => ({
      ...alignment[i]!,
      id: plans[i]!.sourceId,
      parentId: null,
      file,
      host: summaries[i]!.host,
      shiftNs: shifts[i]!,
    }));
    this.#summary = this.#place(facts, sources);
  }

  /**
   * The job of `files` (in merge order: the first is the clock's reference),
   * each read once: its stored summary (built here, on worker threads, where
   * none is current: said in `summarized`), its small tables and zones. A
   * file that is not a readable recording, or the same recording twice, is
   * a RecordingFileError naming it. `checked`: each file was opened through
   * the store's checks a moment ago (SessionRegistry.openFiles: planOpen
   * read every file's ranks so), and is opened here without them where its
   * schema is this version's — the checks cost ~3.5 ms a file, 3.6 s of a
   * job of 1,024, which would be paid twice. `read`: files read already
   * (readRank, by path), as query/open-read.ts reads many on worker threads.
   */
  static async open(recordingId: string, files: readonly string[], opts: { checked?: boolean; read?: ReadonlyMap<string, RankRead> } = {}): Promise<JobQuery> {
    const facts: RankFacts[] = [];
    const summaries: (ViewedSummary | null)[] = [];
    for (const file of files) {
      let r = opts.read?.get(file);
      if (!r) {
        const db = opts.checked ? openChecked(file) : openRecording(file, { readonly: true });
        try {
          r = readRank(db, file);
        } catch (err) {
          throw err instanceof RecordingFileError ? err : new RecordingFileError(file, (err as Error).message, { cause: err });
        } finally {
          db.close();
        }
      }
      summaries.push(r.placed);
      facts.push(r.facts);
    }
    const missing = files.filter((_, i) => summaries[i] === null);
    if (missing.length) {
      const built = await summarizeFiles(missing, { scopes: ['whole'] });
      const byFile = new Map(built.map((b) => [b.file, b.summaries.whole!]));
      files.forEach((file, i) => {
        summaries[i] ??= placed(byFile.get(file)!, file, facts[i]!.summary);
      });
    }
    return new JobQuery(recordingId, files, facts, summaries as ViewedSummary[], missing);
  }

  /**
   * The job's iterations, as `report FILES --iterations` gives them from the
   * same summaries (job/iterations.ts: every rank's steps of the range most
   * ranks repeat, on the job's clock and ids): the timeline's iterations
   * row, a lane per rank, with no row of any rank read. A summary holds the
   * range it picked and no findings: another range's name answers null, and
   * the rows' top findings are not looked for (`findings` false).
   */
  iterations(name: string | null): Iterations | null {
    if (this.#iterations === undefined) this.#iterations = jobIterations(this.#steps, this.#placement);
    const it = this.#iterations;
    return it && (name === null || name === it.name) ? it : null;
  }

  /** The job's summary: every file's in the job's ids, its times moved by its shift. */
  #place(facts: RankFacts[], sources: JobSource[]): RecordingSummary {
    const devices = new Map<number, RecordingSummary['devices'][number]>();
    const streams: RecordingSummary['streams'] = [];
    const processes: RecordingSummary['processes'] = [];
    const counts = { kernels: 0, memcpys: 0, memsets: 0, syncs: 0, apiCalls: 0, nvtxRanges: 0 };
    const warnings: string[] = [];
    let [start, end, gs, ge] = [Infinity, -Infinity, Infinity, -Infinity];
    facts.forEach(({ summary: s, zones }, i) => {
      const rank = this.#ranks[i]!;
      const { plan, shift } = rank;
      const pid = (p: number) => plan.pids.get(p) ?? p;
      const device = (d: number) => plan.devices.get(d) ?? d;
      const streamOff = plan.ids.get('streams')?.off ?? 0;
      const contextOff = plan.ids.get('contexts')?.off ?? 0;
      for (const d of s.devices) {
        const id = device(d.id);
        const had = devices.get(id);
        devices.set(id, had ? { ...had, busyNs: had.busyNs + d.busyNs } : { ...d, id });
      }
      for (const st of s.streams) {
        const id = st.id + streamOff;
        this.#rankOfStream.set(id, i);
        streams.push({
          ...st,
          id,
          rowId: streamRowId(id),
          pid: pid(st.pid),
          deviceId: st.deviceId === null ? null : device(st.deviceId),
          contextId: st.contextId + contextOff,
        });
      }
      const renumbered = new Map(plan.renumbered.map((r) => [r.pid, r.originalPid]));
      for (const p of s.processes) {
        const to = pid(p.pid);
        this.#rankOfPid.set(to, i);
        processes.push({
          ...p,
          pid: to,
          threads: p.threads.map((t) => ({ ...t, pid: to, apiRowId: apiRowId(to, t.tid), nvtxRowId: nvtxRowId(to, t.tid) })),
          sourceId: plan.sourceId,
          originalPid: renumbered.get(to) ?? null,
        });
      }
      for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += s.counts[k];
      for (const w of s.warnings) warnings.push(`${path.basename(rank.file)}: ${w}`);
      if (s.endNs > s.startNs || s.counts.kernels + s.counts.apiCalls > 0) [start, end] = [Math.min(start, s.startNs + shift), Math.max(end, s.endNs + shift)];
      if (s.gpuSpan) [gs, ge] = [Math.min(gs, s.gpuSpan.startNs + shift), Math.max(ge, s.gpuSpan.endNs + shift)];
      for (const z of zones) this.#zones.push({ t: z.t, device: device(z.device), s: z.s + shift, e: z.e + shift, busy: z.busy });
    });
    const first = facts[0]!.summary;
    const incomplete = facts.find((f) => !f.summary.complete);
    return {
      recordingId: this.recordingId,
      name: this.name,
      path: this.path,
      schemaVersion: first.schemaVersion,
      complete: !incomplete,
      incompleteReason: incomplete ? `${path.basename(incomplete.summary.path)}: ${incomplete.summary.incompleteReason ?? 'not finished'}` : null,
      meta: first.meta,
      startNs: Number.isFinite(start) ? start : 0,
      endNs: Number.isFinite(end) ? end : 0,
      gpuSpan: Number.isFinite(gs) ? { startNs: gs, endNs: ge } : null,
      devices: [...devices.values()].sort((a, b) => a.id - b.id),
      processes: processes.sort((a, b) => a.pid - b.pid),
      // As a recording's summary lists them (ORDER BY device_id, cupti_stream_id; no device first).
      streams: streams.sort((a, b) => (a.deviceId ?? -1) - (b.deviceId ?? -1) || a.cuptiStreamId - b.cuptiStreamId || a.id - b.id),
      counts,
      warnings,
      job: { sources, fromSummaries: true },
    };
  }

  summary(): RecordingSummary {
    return this.#summary;
  }

  /** Finished files, read once: never live, one revision. */
  recordingState(): RecordingState {
    const s = this.#summary;
    return { live: false, revision: 0, complete: s.complete, startNs: s.startNs, endNs: s.endNs, counts: s.counts };
  }

  /** Folded ranks' GPU busy and the minimap: every rank's zones, already on the job's clock. */
  overview(buckets: number, range: TimeRange | null = null, devices: OverviewDevices | null = null): OverviewResponse {
    const r = range ?? this.#summary;
    return overviewOfZones(this.#zones, r.startNs, r.endNs, buckets, devices);
  }

  /**
   * Stream and thread rows (and the GPUs' concurrency tracks) from the
   * ranks' own files: each rank asked for its rows over the window on its
   * own clock, the answer moved onto the job's ids and clock.
   */
  window(req: WindowRequest): WindowResponse {
    checkValue('window', 'request', WindowRequestSchema, req);
    // Per rank: its rows (its own row id → the job's), its concurrency tracks.
    const asks = new Map<number, { rows: Map<RowId, RowId>; concurrency: { deviceId: number; rows: RowId[]; buckets: number; index: number }[] }>();
    const askOf = (rank: number) => {
      let a = asks.get(rank);
      if (!a) asks.set(rank, (a = { rows: new Map(), concurrency: [] }));
      return a;
    };
    for (const rowId of req.rows) {
      const [rank, local] = this.#localRow(rowId);
      askOf(rank).rows.set(local, rowId);
    }
    (req.concurrency ?? []).forEach((c, index) => {
      const byRank = new Map<number, RowId[]>();
      for (const rowId of c.rows) {
        const [rank, local] = this.#localRow(rowId);
        byRank.set(rank, [...(byRank.get(rank) ?? []), local]);
      }
      for (const [rank, rows] of byRank) {
        const deviceId = this.#ranks[rank]!.localDevice.get(c.deviceId);
        if (deviceId !== undefined) askOf(rank).concurrency.push({ deviceId, rows, buckets: c.buckets, index });
      }
    });
    const rows = new Map<RowId, WindowRow>();
    const strings: Record<number, string> = {};
    const kernelLabels: Record<number, string> = {};
    const bounded: string[] = [];
    const concurrency = (req.concurrency ?? []).map((c) => {
      const buckets = Math.max(1, Math.floor(c.buckets));
      const zero = () => new Array<number>(buckets).fill(0);
      return {
        deviceId: c.deviceId,
        startNs: req.startNs,
        endNs: req.endNs,
        bucketNs: (req.endNs - req.startNs) / buckets,
        kernels: zero(),
        h2d: zero(),
        d2h: zero(),
        other: zero(),
      };
    });
    for (const [rank, ask] of asks) {
      const { shift, file } = this.#ranks[rank]!;
      const q = this.#rankQuery(rank);
      const answer = q.window({
        rows: [...ask.rows.keys()],
        startNs: req.startNs - shift,
        endNs: req.endNs - shift,
        resolutionNs: req.resolutionNs,
        ...(ask.concurrency.length ? { concurrency: ask.concurrency.map(({ deviceId, rows, buckets }) => ({ deviceId, rows, buckets })) } : {}),
      });
      const name = this.#namesOf(rank, answer.strings, strings);
      for (const [id, label] of Object.entries(answer.kernelLabels)) kernelLabels[name(Number(id))] = label;
      for (const row of answer.rows) {
        rows.set(ask.rows.get(row.rowId)!, {
          ...row,
          rowId: ask.rows.get(row.rowId)!,
          items: row.items.map((it) => ({
            ...it,
            ref: this.#jobRef(rank, it.ref),
            startNs: it.startNs + shift,
            endNs: it.endNs + shift,
            nameId: it.nameId ? name(it.nameId) : 0,
          })),
          coverage: row.coverage.map((c) => ({ ...c, startNs: c.startNs + shift, endNs: c.endNs + shift })),
        });
      }
      if (answer.bounded) bounded.push(`${path.basename(file)}: ${answer.bounded}`);
      // A GPU two ranks' files share (one uuid) has one track: the ranks' tracks summed (at most what was in flight).
      (answer.concurrency ?? []).forEach((c, k) => {
        const out = concurrency[ask.concurrency[k]!.index]!;
        for (const track of ['kernels', 'h2d', 'd2h', 'other'] as const) c[track].forEach((v, b) => (out[track][b]! += v));
      });
    }
    return {
      startNs: req.startNs,
      endNs: req.endNs,
      rows: req.rows.map((rowId) => rows.get(rowId)!),
      strings,
      kernelLabels,
      ...(req.concurrency ? { concurrency } : {}),
      ...(bounded.length ? { bounded: bounded.join('; ') } : {}),
    };
  }

  /** One item from its rank's own file, in the job's ids and on its clock. */
  details(ref: ItemRef): ItemDetails {
    const rank = this.#rankOfItem(ref);
    const { shift, plan } = this.#ranks[rank]!;
    const off = plan.ids.get(ITEM_ID_TABLE[ref.table])?.off ?? 0;
    const d = this.#rankQuery(rank).details({ table: ref.table, id: ref.id - off });
    const moved = (t: unknown) => (typeof t === 'number' ? t + shift : t);
    const fields = { ...d.fields };
    if (typeof fields.id === 'number') fields.id += off;
    for (const k of ['start_ns', 'end_ns'] as const) if (k in fields) fields[k] = moved(fields[k]) as number;
    if (typeof fields.stream_id === 'number') fields.stream_id += plan.ids.get('streams')?.off ?? 0;
    if (typeof fields.pid === 'number') fields.pid = plan.pids.get(fields.pid) ?? fields.pid;
    return {
      ...d,
      ref,
      startNs: d.startNs + shift,
      endNs: d.endNs + shift,
      fields,
      related: d.related.map((r) => ({
        ...r,
        ref: this.#jobRef(rank, r.ref),
        startNs: r.startNs + shift,
        endNs: r.endNs + shift,
        rowId: this.#jobRow(rank, r.rowId),
      })),
      rowId: this.#jobRow(rank, d.rowId),
      graph: d.graph && { ...d.graph, call: d.graph.call && { ...d.graph.call, ref: this.#jobRef(rank, d.graph.call.ref) } },
    };
  }

  /** Why `what` is not answered for a job opened from its ranks' summaries, and where it is. */
  refusal(what: string): ApiError {
    return new ApiError(
      'bad-request',
      `${what} of a job opened from its ranks' summaries (${this.files.length} recordings, not merged) would read every rank's rows: ` +
        "the job's findings and communication are `streamscope report` of the same files (from the same summaries); " +
        "a rank's own are its file's (streamscope open FILE); or open the job merged (--job-view merged)",
      this.path,
    );
  }

  close(): void {
    for (const q of this.#open.values()) q.close();
    this.#open.clear();
  }

  /** The rank's file, open read-only for its detail; the least recently used one closed past OPEN_RANKS. */
  #rankQuery(rank: number): RecordingQuery {
    let q = this.#open.get(rank);
    if (q) this.#open.delete(rank);
    else {
      try {
        q = new RecordingQuery(`${this.recordingId}:${rank}`, this.#ranks[rank]!.file);
      } catch (err) {
        throw apiErrorOf(err, this.#ranks[rank]!.file);
      }
    }
    this.#open.set(rank, q);
    while (this.#open.size > OPEN_RANKS) {
      const [oldest, old] = this.#open.entries().next().value!;
      old.close();
      this.#open.delete(oldest);
    }
    return q;
  }

  /** A row of the job → its rank and the rank file's own row id. */
  #localRow(rowId: RowId): [rank: number, local: RowId] {
    const row = parseRowId(rowId);
    if (row.type === 'stream') {
      const rank = this.#rankOfStream.get(row.lane);
      if (rank === undefined) throw new ApiError('bad-request', `no stream ${row.lane} in this job (${rowId})`);
      return [rank, streamRowId(row.lane - (this.#ranks[rank]!.plan.ids.get('streams')?.off ?? 0))];
    }
    const [, pid, tid] = String(rowId).split(':').map(Number) as [number, number, number];
    const rank = this.#rankOfPid.get(pid);
    if (rank === undefined) throw new ApiError('bad-request', `no process ${pid} in this job (${rowId})`);
    const local = this.#ranks[rank]!.localPid.get(pid) ?? pid;
    return [rank, row.type === 'api' ? apiRowId(local, tid) : nvtxRowId(local, tid)];
  }

  /** A rank file's row id → the job's. */
  #jobRow(rank: number, rowId: RowId): RowId {
    const { plan } = this.#ranks[rank]!;
    const row = parseRowId(rowId);
    if (row.type === 'stream') return streamRowId(row.lane + (plan.ids.get('streams')?.off ?? 0));
    const [, pid, tid] = String(rowId).split(':').map(Number) as [number, number, number];
    const to = plan.pids.get(pid) ?? pid;
    return row.type === 'api' ? apiRowId(to, tid) : nvtxRowId(to, tid);
  }

  /** A rank file's item → the job's id (its table's run, as merge numbers it). */
  #jobRef(rank: number, ref: ItemRef): ItemRef {
    return { table: ref.table, id: ref.id + (this.#ranks[rank]!.plan.ids.get(ITEM_ID_TABLE[ref.table])?.off ?? 0) };
  }

  /** The rank whose run of ids holds `ref`. */
  #rankOfItem(ref: ItemRef): number {
    const table = ITEM_ID_TABLE[ref.table];
    if (!table) throw new ApiError('bad-request', `unknown item table '${String(ref.table)}'`);
    const rank = this.#ranks.findIndex((r) => {
      const run = r.plan.ids.get(table);
      return run !== undefined && run.max >= run.min && ref.id >= run.min + run.off && ref.id <= run.max + run.off;
    });
    if (rank < 0) throw new ApiError('not-found', `no ${ref.table} row ${ref.id} in this job`);
    return rank;
  }

  /** The job's id of each of a rank's names in `strings` (added to `out`), numbered by value across the ranks. */
  #namesOf(rank: number, strings: Record<number, string>, out: Record<number, string>): (local: number) => number {
    let ids = this.#rankNames.get(rank);
    if (!ids) this.#rankNames.set(rank, (ids = new Map()));
    for (const [local, value] of Object.entries(strings)) {
      let id = this.#nameIds.get(value);
      if (id === undefined) this.#nameIds.set(value, (id = this.#nameIds.size + 1));
      ids.set(Number(local), id);
      out[id] = value;
    }
    const map = ids;
    return (local) => map.get(local) ?? 0;
  }
}

/** A file the store's checks read a moment ago: read-only as it is, unless its schema is another (openRecording then says why or migrates it). */
function openChecked(file: string): Db {
  let db: Db;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    return openRecording(file, { readonly: true });
  }
  if (db.pragma('user_version', { simple: true }) === latestSchemaVersion) return db;
  db.close();
  return openRecording(file, { readonly: true });
}

/** What placing needs of a summary; the rest (its parts: the analysis's) is let go. */
function placed(s: RankSummary, file: string, read: RecordingSummary): ViewedSummary {
  // Where its first row starts before its origin, from the zones just read (merge's definition, store/zones.ts
  // beforeOriginNs): a summary stored before summaries kept it has none, and the job would start later than merged.
  const before = Math.min(0, read.startNs);
  return {
    file,
    origin: s.origin,
    ...(before < 0 ? { beforeOriginNs: before } : {}),
    host: s.host,
    facts: s.facts,
    collectives: s.collectives,
    iterations: s.iterations,
    processes: s.processes,
  };
}
