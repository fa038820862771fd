// `streamscope merge`: many recordings as one job (issue 13). Every input's
// processes, threads, devices, contexts, streams and rows go into one new
// recording, copied by SQLite itself (ATTACH, then one INSERT … SELECT per
// table and input) with their references moved:
//
//  - ids: each input's contexts, streams and rows of each table become one
//    run of ids after the previous inputs' (id + the input's offset), so
//    its zones are its own zones with their rowid ranges, lanes and times
//    moved, not built again; strings are merged by value; devices by GPU
//    uuid (the same GPU seen by two recordings is one device);
//  - pids: kept, except where an earlier input has a process of the same
//    pid (two hosts, containers): then it gets a free one, counting down
//    from the largest pid thread lanes allow, and keeps its own in
//    processes.original_pid;
//  - times: every input's times move by its shift, the difference of its
//    origin from the merged one (the job's first recorded time: an input's
//    rows may start before its own origin) plus its host's clock correction
//    (align.ts: from the NCCL collectives the ranks share; the wall clock
//    when they share none);
//  - provenance: a sources row per input (file, host, meta, shift,
//    correction, residual), a source_rows range per input and table, and
//    processes.source_id. A merged input's own sources come along as its
//    children, so a merge of merges keeps both levels.
//
// Where each input's rows land is planned before any is copied (plan.ts),
// so that the big tables (operations, calls, ranges: nearly every row) can
// be written first, all inputs at once, as SQLite pages on all cores
// (native/addon/src/page_merge.h): each record rewritten by the same moves
// the SQL below applies (InputSql.move), packed into leaf pages appended to
// the output, the b-tree built over them. SQLite writes a file from one
// thread, row by row through its b-tree, which took 22–27 CPU s of a
// 64-rank job's merge before any rewriting. The rest (small tables, zones,
// provenance, meta, indexes) is SQL, input after input. Inputs the pages
// cannot take (a record that overflows its page, a moved column that is not
// an integer) are merged in SQL throughout, as `pages: false` does.
//
// Written to a temporary file beside the output and published when complete
// (store/output-file.ts): a merge that fails leaves nothing, and never
// replaces an existing file, nor (even with --force) one of its inputs.
import fs from 'node:fs';
import path from 'node:path';
import { VERSION } from '../contract/version.ts';
import { beginBulkLoad, compact, createRecording, endBulkLoad, openRecording, readMeta, writeMeta, type Db } from '../store/database.ts';
import { latestSchemaVersion } from '../store/migrations/index.ts';
import { beginOutput, checkOutput } from '../store/output-file.ts';
import { RecordingFileError, writeFailureOf } from '../store/recording-error.ts';
import { THREAD_LANE_FACTOR, ZONED_TABLES, zoneShapeSql, zonesFromRowsSql, type ZonedTable } from '../store/zone-tables.ts';
import { beforeOriginNs } from '../store/zones.ts';
import { alignClocks, type InputAlignment } from './align.ts';
import type { SourceAlignment } from '../contract/job.ts';
import { readCollectives } from './collectives.ts';
import { readInputFacts } from './input-facts.ts';
import { NoFreePidError, planMerge, type InputFacts, type InputPlan } from './plan.ts';
import { BULK_TABLES, MERGE_TABLES, type Role } from './tables.ts';
import { appendTablePages, type PageColumnOp, type PageMergeTable } from '../native/addon.ts';
import Database from 'better-sqlite3';

export type AlignMode = 'collectives' | 'wall-clock';

export interface MergeOptions {
  /** Replace an existing output (`--force`). */
  overwrite?: boolean;
  /** collectives (default): each host's clock corrected by the NCCL collectives; wall-clock: times as recorded. */
  align?: AlignMode;
  /** After each input is copied (its big tables were written before, all inputs at once, when they went as pages). */
  onProgress?: (done: number, total: number, file: string) => void;
  /**
   * Write the big tables as SQLite pages on all cores (default: when every
   * input allows it, else SQL); false: everything in SQL on one thread.
   */
  pages?: boolean;
  /** Rebuild a small output with 4 KiB pages (default true; the tests read the pages as merge wrote them). */
  compact?: boolean;
}

/** One input as merged: where its clock was placed (file as given), and what it brought. */
export interface MergedSource extends SourceAlignment {
  processes: number;
  /** Its processes that got another pid here. */
  renumbered: { originalPid: number; pid: number }[];
  /** Its rows per table. */
  rows: Record<string, number>;
}

export interface MergeResult {
  output: string;
  sources: MergedSource[];
  /** Rows per table of the merged recording. */
  rows: Record<string, number>;
  devices: number;
  processes: number;
  notes: string[];
  seconds: number;
  /** How the big tables were written; `sqlBecause`: why not as pages, when they could not be. */
  bigTables: 'pages' | 'sql';
  sqlBecause: string | null;
}

interface Input {
  file: string;
  abs: string;
  meta: Map<string, string>;
  origin: bigint;
  host: string | null;
  /** host|origin of the recording, and of each recording a merged input holds: the same twice is an error. */
  identities: string[];
  pids: number[];
  hasSources: boolean;
  collectives: ReturnType<typeof readCollectives>;
  /** What the plan needs (plan.ts). */
  facts: InputFacts;
  /** Tables of the schema it lacks (a damaged file): copying it fails there, as SQLite says. */
  missingTables: string[];
  /** Per big table: its root page and columns (the pages need them; a table whose columns differ from the output's goes in SQL). */
  bigTables: Map<string, { root: number; columns: string[] }>;
  /** Why its big tables cannot go as pages (null: they can). */
  notAsPages: string | null;
  /** Its first recorded time where that is before its origin (else 0): a launcher recorded with its rank (torchrun under the recorder) initialises CUDA seconds before the rank does, whose stream is the origin. */
  beforeOriginNs: number;
}

/** Merges `inputs` into a new recording at `output`. Problems with a file are RecordingFileErrors naming it. */
export function mergeRecordings(inputs: readonly string[], output: string, opts: MergeOptions = {}): MergeResult {
  const t0 = performance.now();
  if (inputs.length === 0) throw new RecordingFileError(output, 'nothing to merge: give the recordings to merge');
  checkOutput(output, { overwrite: opts.overwrite, inputs });
  const seen = new Map<string, string>();
  for (const file of inputs) {
    if (!fs.existsSync(file)) throw new RecordingFileError(file, 'no such file');
    const st = fs.statSync(file);
    const id = `${st.dev}:${st.ino}`;
    if (seen.has(id)) throw new RecordingFileError(file, `given twice (also as ${seen.get(id)}): each recording can be merged once`);
    seen.set(id, file);
  }

  // Every input read and checked before anything is written.
  const list: Input[] = inputs.map((file) => inspect(file));
  const identities = new Map<string, string>();
  for (const input of list) {
    for (const id of input.identities) {
      const other = identities.get(id);
      if (other !== undefined)
        throw new RecordingFileError(input.file, `holds the same recording as ${other} (same host, origin and processes): each recording can be merged once`);
      identities.set(id, input.file);
    }
  }

  // Clocks: every input's origin on the reference timeline, then each host's correction.
  const originMin = list.reduce((m, i) => (i.origin < m ? i.origin : m), list[0]!.origin);
  const base = list.map((i) => i.origin - originMin);
  for (const [i, b] of base.entries()) {
    if (b > BigInt(Number.MAX_SAFE_INTEGER))
      throw new RecordingFileError(list[i]!.file, 'was recorded more than 104 days apart from the others: merge recordings of one job');
  }
  let alignment: InputAlignment[];
  if ((opts.align ?? 'collectives') === 'collectives') {
    alignment = alignClocks(list.map((input, i) => ({ ranks: [...input.collectives.values()], baseNs: Number(base[i]!) })));
    followHosts(list, alignment);
  } else {
    alignment = list.map((_, i) => ({
      clock: i === 0 ? 'reference' : 'wall-clock',
      correctionNs: 0,
      collectives: 0,
      residualNs: null,
      residualMaxNs: null,
    }));
  }
  const notes: string[] = [...collectiveCountNotes(list, alignment)];
  const corrected = list.map((input, i) => input.origin + BigInt(alignment[i]!.correctionNs));
  // The merged origin is the job's own start: the earliest of every input's
  // first recorded time on the job's clock, so that no time of the job is
  // negative (its ruler, its start-up and every "starts at" count from it).
  const starts = corrected.map((o, i) => o + BigInt(list[i]!.beforeOriginNs));
  const originOut = starts.reduce((m, o) => (o < m ? o : m), starts[0]!);
  const shifts = corrected.map((o) => Number(o - originOut));
  let plans: InputPlan[];
  try {
    plans = planMerge(list.map((i) => i.facts));
  } catch (err) {
    if (err instanceof NoFreePidError) throw new RecordingFileError(list[err.input]!.file, err.message);
    throw err;
  }

  // Written beside the output, published at the end.
  const out = beginOutput(output, { overwrite: opts.overwrite, inputs });
  const merge: Merge = { list, plans, shifts, alignment, notes, originOut, opts, partial: out.temp, output };
  const blocked = opts.pages === false ? 'pages: false' : (list.find((i) => i.notAsPages !== null)?.notAsPages ?? null);
  let result: Omit<MergeResult, 'output' | 'seconds' | 'sqlBecause'>;
  let sqlBecause = blocked;
  try {
    try {
      result = writeMerged(merge, blocked === null);
    } catch (err) {
      if (blocked !== null || (err as { code?: string }).code !== 'PAGE_MERGE_UNSUPPORTED') throw err;
      // A record the pages cannot take: the output is started again, in SQL.
      sqlBecause = (err as Error).message;
      out.empty();
      result = writeMerged(merge, false);
    }
    out.publish();
  } catch (err) {
    out.discard();
    throw err;
  }
  return { ...result, output, seconds: (performance.now() - t0) / 1000, sqlBecause: opts.pages === false ? null : sqlBecause };
}

/** What writing the merged file needs: the checked inputs, their plans, shifts and clocks. */
interface Merge {
  list: Input[];
  plans: InputPlan[];
  shifts: number[];
  alignment: InputAlignment[];
  notes: string[];
  originOut: bigint;
  opts: MergeOptions;
  /** The temporary file written, and the output it becomes (the name errors give). */
  partial: string;
  output: string;
}

/**
 * The merged recording written to `partial` (empty: the output's temporary
 * file): with `pages`, the big tables of every input first, as pages on
 * all cores, then the rest in SQL input by input. On failure the file is
 * closed and left to the caller, to empty or discard.
 */
function writeMerged(m: Merge, pages: boolean): Omit<MergeResult, 'output' | 'seconds' | 'sqlBecause'> {
  const { list, plans, shifts, alignment, partial, opts } = m;
  const notes = [...m.notes];
  let db: Db;
  try {
    db = createRecording(partial);
  } catch (err) {
    throw err instanceof RecordingFileError ? new RecordingFileError(m.output, err.problem, { cause: err }) : err;
  }
  const sources: MergedSource[] = [];
  const settings = (d: Db) => {
    d.pragma('foreign_keys = OFF'); // every reference is remapped by construction; test/merge checks foreign_key_check
    d.pragma('journal_mode = OFF'); // a failed merge deletes the file: no rollback needed
    d.pragma('synchronous = OFF'); // synced once, when published (store/output-file.ts)
    d.pragma('temp_store = MEMORY');
    d.pragma('cache_size = -262144');
  };
  try {
    settings(db);
    const missing = unclassified(db);
    if (missing.length) throw new Error(`merge: profiler/merge/tables.ts does not say how to merge ${missing.join(', ')}`);
    beginBulkLoad(db);
    const sqls = list.map((input, i) => new InputSql(db, input, plans[i]!, shifts[i]!));
    let pageRows: Map<string, number>[] | null = null;
    if (pages) {
      const roots = new Map(bigTableRoots(db));
      db.close();
      pageRows = writePages(m, sqls, roots);
      db = new Database(partial);
      settings(db);
    }
    db.exec('CREATE TEMP TABLE merge_strings (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)');
    list.forEach((input, i) => {
      const a = alignment[i]!;
      const copied = copyInput(db, input, sqls[i]!, a, pageRows?.[i] ?? null);
      sources.push({
        file: input.file,
        host: input.host,
        clock: a.clock,
        shiftNs: shifts[i]!,
        correctionNs: a.correctionNs,
        collectives: a.collectives,
        residualNs: a.residualNs,
        residualMaxNs: a.residualMaxNs,
        processes: input.pids.length,
        renumbered: copied.renumbered,
        rows: copied.rows,
      });
      for (const r of copied.renumbered) {
        notes.push(
          `pid ${r.originalPid} of ${input.file}${input.host ? ` (host ${input.host})` : ''} is pid ${r.pid} here: an earlier recording has a process ${r.originalPid}`,
        );
      }
      opts.onProgress?.(i + 1, list.length, input.file);
    });
    writeMeta(db, mergedMeta(db, list, m.originOut, sources, opts.align ?? 'collectives', notes));
    endBulkLoad(db);
    if (opts.compact !== false) compact(db, partial);
    db.pragma('journal_mode = DELETE');
    // Rows per table: what was copied, and the tables merge wrote itself (small) counted.
    const rows: Record<string, number> = {};
    for (const s of sources) for (const [t, n] of Object.entries(s.rows)) rows[t] = (rows[t] ?? 0) + n;
    for (const t of db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[])
      if (!(t in rows)) rows[t] = (db.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n;
    db.close();
    return { sources, rows, devices: rows.devices!, processes: rows.processes!, notes, bigTables: pages ? 'pages' : 'sql' };
  } catch (err) {
    try {
      db.close();
    } catch {
      // closed already
    }
    // The output could not be written (a full disk, a write error): said of it, whichever input was being copied.
    throw writeFailureOf(err, m.output) ?? err;
  }
}

/**
 * Every input's big tables appended to the output as pages, all at once on
 * all cores (native/addon/src/page_merge.h), each column moved as the SQL
 * path would move it (InputSql.pageColumns). Returns per input the rows of
 * each table; checks that each landed where the plan put it.
 */
function writePages({ partial, output }: Merge, sqls: InputSql[], roots: Map<string, number>): Map<string, number>[] {
  const tables: PageMergeTable[] = BULK_TABLES.map((table) => ({
    name: table,
    root: roots.get(table)!,
    inputs: sqls.map((sql) => ({
      file: sql.input.abs,
      root: sql.input.bigTables.get(table)!.root,
      rowidAdd: sql.offsetOf(table),
      columns: sql.pageColumns(table),
    })),
  }));
  let written;
  try {
    written = appendTablePages(partial, tables);
  } catch (err) {
    // The addon names the file first ("<path>: damaged …"): an input's problem is that input's, the temporary file's the output's.
    const message = (err as Error).message;
    if (message.startsWith(`${partial}:`)) throw new RecordingFileError(output, message.slice(partial.length + 2), { cause: err });
    const input = sqls.find((s) => message.startsWith(`${s.input.abs}:`) || message.startsWith(`${s.input.abs},`))?.input;
    if (input && (err as { code?: string }).code !== 'PAGE_MERGE_UNSUPPORTED')
      throw new RecordingFileError(input.file, `cannot merge: ${message.slice(input.abs.length + 2)}`, { cause: err });
    throw err;
  }
  return sqls.map((sql, i) => {
    const rows = new Map<string, number>();
    BULK_TABLES.forEach((table, t) => {
      const r = written.rows[t]![i]!;
      const run = sql.plan.ids.get(table);
      if (r.rows > 0 && (!run || r.lastRowid !== run.max + run.off || r.firstRowid !== run.min + run.off))
        throw new Error(`merge: ${table} of ${sql.input.file} did not land at ids ${run ? `${run.min + run.off}..${run.max + run.off}` : '(none planned)'}`);
      rows.set(table, r.rows);
    });
    return rows;
  });
}

/**
 * Collectives are matched by their order: a recording that does not hold
 * the same ones as the others (a capture range, dropped records, a rank
 * that joined late) is matched one collective off, by as many steps as it
 * lacks, which the residual of a steady, periodic job does not show. Said
 * when the counts differ.
 */
function collectiveCountNotes(list: Input[], alignment: InputAlignment[]): string[] {
  // Loops, not Math.max(...): a spread of every collective overflows the stack on a long job.
  const countOf = (input: Input) => {
    let most = 0;
    for (const keys of input.collectives.values()) most = Math.max(most, keys.size);
    return most;
  };
  const aligned = list.filter((input, i) => alignment[i]!.collectives > 0 && countOf(input) > 0);
  if (aligned.length < 2) return [];
  const counts = aligned.map(countOf);
  const most = counts.reduce((m, n) => Math.max(m, n), 0);
  return aligned
    .filter((_, i) => counts[i] !== most)
    .map(
      (input) =>
        `${input.file} holds ${countOf(input)} NCCL collectives per rank, another recording ${most}: collectives are matched by their order, ` +
        'so recordings that do not hold the same ones (a capture range, dropped records) may be aligned a collective or more off',
    );
}

/**
 * A recording none of whose collectives matched (or that ran none) takes
 * the correction of the recordings of its host (meta host) that were
 * aligned: one host, one clock. A host name is not proof of one machine
 * (containers, VMs all named alike), which is why each recording with
 * collectives is aligned on its own rather than by host.
 */
/**
 * A recording none of whose own collectives matched is corrected as the
 * recordings of its host that were (the median of their corrections):
 * recordings of one host share its clock. In place.
 */
export function followHosts(list: readonly { host: string | null; hasSources: boolean }[], alignment: InputAlignment[]): void {
  list.forEach((input, i) => {
    if (alignment[i]!.clock !== 'wall-clock' || input.host === null || input.hasSources) return;
    const peers = list
      .map((other, j) => ({ other, a: alignment[j]! }))
      .filter(({ other, a }) => other.host === input.host && !other.hasSources && (a.clock === 'collectives' || a.clock === 'reference') && a.collectives > 0);
    if (peers.length === 0) return;
    const corrections = peers.map((p) => p.a.correctionNs).sort((a, b) => a - b);
    alignment[i] = { ...alignment[i]!, clock: 'same-host', correctionNs: corrections[Math.floor((corrections.length - 1) / 2)]! };
  });
}

/** What tells recordings apart when merging: the same one given twice (or inside a merged input) is refused. */
export function recordingIdentity(host: string | null, origin: string, pids: readonly number[]): string {
  return `${host ?? ''}|${origin}|${pids.join(',')}`;
}

/** Opens an input as every reader does (the checks of openRecording: not a recording, newer schema, locked …) and reads what the merge needs first. */
function inspect(file: string): Input {
  const db = openRecording(file, { readonly: true });
  try {
    db.pragma('mmap_size = 1073741824'); // the scan for collectives reads every kernel: mapped, not copied (a quarter faster)
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version !== latestSchemaVersion) throw new RecordingFileError(file, `schema version ${version}, expected ${latestSchemaVersion} after migrating`);
    const meta = readMeta(db);
    if (meta.has('pending_indexes'))
      throw new RecordingFileError(
        file,
        'is still being written, or its writer stopped before finishing it (open it once with `streamscope report` to finish it)',
      );
    const originText = meta.get('origin_ns');
    if (!originText || !/^-?\d+$/.test(originText))
      throw new RecordingFileError(file, 'has no origin_ns in its meta: its times cannot be placed beside the others');
    const host = meta.get('host') ?? null;
    const pids = db.prepare('SELECT pid FROM processes ORDER BY pid').pluck().all() as number[];
    const inner = db.prepare('SELECT id, host, meta FROM sources WHERE id NOT IN (SELECT parent_id FROM sources WHERE parent_id IS NOT NULL)').all() as {
      id: number;
      host: string | null;
      meta: string;
    }[];
    // A recording is its host, its origin and its processes (as recorded): two ranks' traces imported without a host
    // name may start at the same microsecond, and are still two recordings.
    const pidsOf = new Map<number, number[]>();
    for (const r of db.prepare('SELECT source_id AS source, coalesce(original_pid, pid) AS pid FROM processes ORDER BY 2').all() as {
      source: number | null;
      pid: number;
    }[]) {
      const list = pidsOf.get(r.source ?? 0) ?? [];
      list.push(r.pid);
      pidsOf.set(r.source ?? 0, list);
    }
    const identities = inner.length
      ? inner.map((s) => recordingIdentity(s.host, (JSON.parse(s.meta) as Record<string, string>).origin_ns ?? '', pidsOf.get(s.id) ?? []))
      : [recordingIdentity(host, originText, pids)];
    const abs = path.resolve(file);
    const tables = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]);
    const bigTables = new Map<string, { root: number; columns: string[] }>();
    for (const [name, root] of bigTableRoots(db))
      bigTables.set(name, { root, columns: db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(name) as string[] });
    return {
      file,
      abs,
      meta,
      origin: BigInt(originText),
      host,
      identities,
      pids,
      hasSources: inner.length > 0,
      collectives: readCollectives(db),
      facts: readInputFacts(db, pids),
      missingTables: Object.keys(MERGE_TABLES).filter((t) => !tables.has(t)),
      bigTables,
      notAsPages: notAsPages(file, db, bigTables),
      // From the zones (every writer keeps them: SCHEMA.md "Zones"); a file without them is placed by its origin.
      beforeOriginNs: beforeOriginNs(db),
    };
  } finally {
    db.close();
  }
}

/** The big tables a recording has, each with its b-tree's root page (where the page writer reads or writes it). */
function bigTableRoots(db: Db): [string, number][] {
  return db
    .prepare(`SELECT name, rootpage FROM sqlite_schema WHERE type = 'table' AND name IN (${BULK_TABLES.map(() => '?').join(', ')})`)
    .raw()
    .all(...BULK_TABLES) as [string, number][];
}

/**
 * Why an input's big tables cannot be written as pages (null: they can):
 * the pages read the file itself, so it must hold all of its rows (no
 * write-ahead log beside it) and every big table (their columns are
 * checked against the output's by InputSql.pageColumns).
 */
function notAsPages(file: string, db: Db, bigTables: Map<string, { columns: string[] }>): string | null {
  const wal = `${file}-wal`;
  if (fs.existsSync(wal) && fs.statSync(wal).size > 0) return `${file} has a write-ahead log beside it`;
  if (db.pragma('encoding', { simple: true }) !== 'UTF-8') return `${file} is not UTF-8`;
  const missing = BULK_TABLES.find((table) => !bigTables.has(table));
  return missing ? `${file} has no table ${missing}` : null;
}

/** SQL for `n` added to a column (nothing when 0). */
function plus(column: string, n: number | bigint): string {
  return n === 0 || n === 0n ? column : `(${column} + ${n})`;
}

/**
 * How a column's values move, the one definition both ways of writing use:
 * SQL (moveSql) and pages (the addon's column operations, the same three).
 */
type Move = { kind: 'keep' } | { kind: 'add'; add: number } | { kind: 'map'; pairs: [number, number][]; keepOthers: boolean };

const KEEP: Move = { kind: 'keep' };
const added = (n: number): Move => (n === 0 ? KEEP : { kind: 'add', add: n });

/**
 * The values `map` moves: nothing when none moves; a constant when every
 * value moves by one (a rank's devices, its one process, as a rule) and
 * `onlyKeys` says the column holds no other values; else the pairs, values
 * not listed staying (`keepOthers`) or becoming NULL.
 */
function mapped(map: Map<number, number>, opts: { keepOthers: boolean; onlyKeys: boolean }): Move {
  const pairs = [...map];
  if (pairs.every(([a, b]) => a === b)) return KEEP;
  const d = pairs[0]![1] - pairs[0]![0];
  if (opts.onlyKeys && pairs.every(([a, b]) => b - a === d)) return added(d);
  return { kind: 'map', pairs: opts.keepOthers ? pairs.filter(([a, b]) => a !== b) : pairs, keepOthers: opts.keepOthers };
}

/** A move as SQL over `column` (a CASE for a map). */
function moveSql(column: string, m: Move): string {
  switch (m.kind) {
    case 'keep':
      return column;
    case 'add':
      return plus(column, m.add);
    case 'map':
      return `CASE ${column} ${m.pairs.map(([a, b]) => `WHEN ${a} THEN ${b}`).join(' ')} ELSE ${m.keepOthers ? column : 'NULL'} END`;
  }
}

/**
 * How one input's rows are copied as its plan says: each column of a table
 * as the merged recording holds it, as SQL (rows) and, for the big tables,
 * as the column operations of the pages (pageColumns): one Move each.
 */
class InputSql {
  readonly input: Input;
  readonly plan: InputPlan;
  readonly shift: number;
  readonly #columns: (table: string) => string[];
  /** Its strings that move: a CASE when few (ranks of one program name their kernels alike), else a lookup per row in temp.merge_strings. */
  readonly #movedStrings: [number, number][];

  constructor(db: Db, input: Input, plan: InputPlan, shift: number) {
    this.input = input;
    this.plan = plan;
    this.shift = shift;
    // Read now: the output's connection is closed and opened again around the pages.
    const columns = new Map(Object.keys(MERGE_TABLES).map((table) => [table, columnsOfTable(db, table)]));
    this.#columns = (table) => columns.get(table) ?? [];
    this.#movedStrings = [...plan.strings].filter(([a, b]) => a !== b);
  }

  get stringsLookup(): boolean {
    return this.#movedStrings.length > 16;
  }

  /** Added to the ids of `table` (0: a table without ids of its own, or one the input lacks, whose copy then fails naming it). */
  offsetOf(table: string): number {
    return this.plan.ids.get(table)?.off ?? 0;
  }

  /** How one column's values move; null: not a move of values (a source id, an original pid: processes, in SQL only). */
  move(table: string, column: string, role: Role): Move | null {
    const { plan } = this;
    switch (role) {
      case 'keep':
        return KEEP;
      case 'time':
        return added(this.shift);
      case 'pid':
        // Every pid column names one of the input's processes, except a parent's (ppid), which may be outside it.
        return mapped(plan.pids, { keepOthers: true, onlyKeys: column !== 'ppid' });
      case 'device':
        return mapped(plan.devices, { keepOthers: false, onlyKeys: true });
      case 'context':
        return added(this.offsetOf('contexts'));
      case 'stream':
        return added(this.offsetOf('streams'));
      case 'string':
        return this.#movedStrings.length ? { kind: 'map', pairs: this.#movedStrings, keepOthers: true } : KEEP;
      case 'rowid':
        return added(this.offsetOf(table));
      case 'cpu-op':
        return added(this.offsetOf('cpu_ops'));
      case 'source':
      case 'original-pid':
        return null;
    }
  }

  /** The big table's column operations for the pages, in the output's column order (which the input's must have). */
  pageColumns(table: string): PageColumnOp[] {
    const columns = this.#columns(table);
    const own = this.input.bigTables.get(table)!.columns;
    if (own.length !== columns.length || own.some((c, i) => c !== columns[i]))
      throw Object.assign(new Error(`${this.input.file}: its ${table} has columns ${own.join(', ')}, the merged recording ${columns.join(', ')}`), {
        code: 'PAGE_MERGE_UNSUPPORTED',
      });
    const spec = MERGE_TABLES[table]!;
    return columns.map((column): PageColumnOp => {
      const m = spec.columns[column] === 'rowid' ? KEEP : this.move(table, column, spec.columns[column]!);
      if (m === null) throw new Error(`merge: ${table}.${column} is not a move of values and cannot be written as pages`);
      return m.kind === 'map' ? { kind: 'map', pairs: m.pairs.flat(), keepOthers: m.keepOthers } : m;
    });
  }

  /** SQL for one column of the input's rows as the merged recording holds it; null: left to SQLite (the rowid, numbered in order). */
  #expr(table: string, column: string, role: Role, givenIds: boolean): string | null {
    const { plan } = this;
    switch (role) {
      case 'string':
        // Many moved strings: a lookup per row in temp.merge_strings rather than a long CASE.
        return this.stringsLookup && this.#movedStrings.length
          ? `(SELECT new FROM temp.merge_strings WHERE old = ${column})`
          : moveSql(column, this.move(table, column, role)!);
      case 'rowid':
        return givenIds ? moveSql(column, this.move(table, column, role)!) : null;
      case 'source':
        return this.input.hasSources ? `(${column} + ${plan.sourceId})` : `${plan.sourceId}`;
      case 'original-pid': {
        const renumbered = plan.renumbered.map((r) => r.originalPid);
        return renumbered.length ? `CASE WHEN pid IN (${renumbered.join(',')}) THEN coalesce(${column}, pid) ELSE ${column} END` : column;
      }
      default:
        return moveSql(column, this.move(table, column, role)!);
    }
  }

  /** INSERT … SELECT of the input's `table` (attached as src) into main; `givenIds`: ids moved by the offset rather than numbered by SQLite. */
  rows(table: string, givenIds: boolean, tail = ''): string {
    const spec = MERGE_TABLES[table]!;
    const target: string[] = [];
    const select: string[] = [];
    for (const column of this.#columns(table)) {
      const e = this.#expr(table, column, spec.columns[column]!, givenIds);
      if (e === null) continue;
      target.push(column);
      select.push(e);
    }
    const order = spec.columns.id === 'rowid' ? ' ORDER BY id' : '';
    return `INSERT INTO main.${table} (${target.join(', ')}) SELECT ${select.join(', ')} FROM src.${table}${tail}${order}`;
  }
}

/** One input's rows into the output; `pageRows`: its big tables' rows, written as pages already. */
function copyInput(db: Db, input: Input, sql: InputSql, align: InputAlignment, pageRows: Map<string, number> | null) {
  // Read only: nothing here writes to src (SQLite in better-sqlite3 takes no URI filenames, so no mode=ro).
  db.prepare('ATTACH DATABASE ? AS src').run(input.abs);
  try {
    db.exec('BEGIN');
    const result = copyAttached(db, input, sql, align, pageRows);
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    const e = err as { code?: string; message: string };
    if (e instanceof RecordingFileError || writeFailureOf(err, '')) throw err;
    if (e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED')
      throw new RecordingFileError(input.file, 'database is locked by another process (is a recording still being written?)', { cause: err });
    throw new RecordingFileError(input.file, `cannot merge: ${e.message}`, { cause: err });
  } finally {
    db.exec('DETACH DATABASE src');
  }
}

function columnsOfTable(db: Db, table: string): string[] {
  return db.prepare('SELECT name FROM main.pragma_table_info(?)').pluck().all(table) as string[];
}

/** Tables and columns of the schema that MERGE_TABLES does not classify (none, or merge would copy them wrong). */
export function unclassified(db: Db): string[] {
  const out: string[] = [];
  for (const table of db.prepare("SELECT name FROM main.sqlite_schema WHERE type = 'table'").pluck().all() as string[]) {
    const spec = MERGE_TABLES[table];
    if (!spec) out.push(table);
    else for (const c of columnsOfTable(db, table)) if (!(c in spec.columns)) out.push(`${table}.${c}`);
  }
  return out;
}

function maxId(db: Db, schema: 'main' | 'src', table: string, column = 'id'): number {
  return (db.prepare(`SELECT max(${column}) AS m FROM ${schema}.${table}`).get() as { m: number | null }).m ?? 0;
}

/** One input's rows into the output, as its plan says; `pageRows`: its big tables' rows, written as pages already. */
function copyAttached(db: Db, input: Input, sql: InputSql, align: InputAlignment, pageRows: Map<string, number> | null) {
  const { plan, shift } = sql;
  const columnsOf = (table: string) => columnsOfTable(db, table);
  const tables = new Set(db.prepare("SELECT name FROM main.sqlite_schema WHERE type = 'table'").pluck().all() as string[]);

  // Strings: by value, with the ids the plan gave the new ones (the merged table's UNIQUE value would refuse a wrong plan).
  if (plan.stringsFirst) db.exec('INSERT INTO main.strings SELECT * FROM src.strings');
  else {
    db.exec('DELETE FROM temp.merge_strings');
    const pair = db.prepare('INSERT INTO temp.merge_strings (old, new) VALUES (?, ?)');
    for (const [a, b] of plan.strings) pair.run(a, b);
    db.exec(`INSERT INTO main.strings (id, value, demangled) SELECT m.new, s.value, s.demangled FROM src.strings s JOIN temp.merge_strings m ON m.old = s.id
      WHERE NOT EXISTS (SELECT 1 FROM main.strings x WHERE x.id = m.new) ORDER BY s.id`);
  }

  // Devices: by uuid; a GPU already there gets the facts it lacks from this input.
  const deviceCols = columnsOf('devices');
  const insertDevice = db.prepare(`INSERT INTO main.devices (${deviceCols.join(', ')}) VALUES (${deviceCols.map(() => '?').join(', ')})`);
  const fill = db.prepare(
    `UPDATE main.devices SET ${deviceCols
      .filter((c) => c !== 'id' && c !== 'uuid')
      .map((c) => `${c} = coalesce(${c}, @${c})`)
      .join(', ')} WHERE id = @id`,
  );
  for (const d of db.prepare('SELECT * FROM src.devices ORDER BY id').all() as Record<string, unknown>[]) {
    const id = plan.devices.get(d.id as number)!;
    if (plan.newDevices.has(d.id as number)) insertDevice.run(deviceCols.map((c) => (c === 'id' ? id : d[c])));
    else fill.run({ ...d, id });
  }

  const sourceId = plan.sourceId;
  const offsetOf = (table: string) => sql.offsetOf(table);

  // Every table of rows, in order: what a row refers to is there before it.
  const rows: Record<string, number> = {};
  const counts = new Map<string, number>();
  for (const [table, spec] of Object.entries(MERGE_TABLES)) {
    if (spec.how !== 'rows' || !tables.has(table)) continue;
    const run = plan.ids.get(table);
    let n: number;
    if (pageRows?.has(table)) {
      // Written as pages, where the plan put them (checked then).
      n = pageRows.get(table)!;
      if (run) counts.set(table, n);
      rows[table] = n;
      continue;
    } else if (spec.columns.id === 'rowid') {
      // SQLite numbering the rows itself (max + 1, in id order) is cheaper than checking each given id; right when the
      // input's ids have no gaps. When they have (rows a capture range left out), copied again with their ids moved.
      const before = maxId(db, 'main', table);
      n = db.prepare(sql.rows(table, false)).run().changes;
      if (run && n > 0 && n !== run.max - run.min + 1) {
        db.prepare(`DELETE FROM main.${table} WHERE id > ?`).run(before);
        n = db.prepare(sql.rows(table, true)).run().changes;
      }
    } else {
      n = db.prepare(sql.rows(table, true)).run().changes;
    }
    if (run && n > 0 && maxId(db, 'main', table) !== run.max + run.off)
      throw new Error(`merge: ${table} of ${input.file} did not land at ids ${run.min + run.off}..${run.max + run.off}`);
    if (run) counts.set(table, n);
    rows[table] = n;
  }

  // Zones: the input's own, moved with its rows.
  const zoneCase = (f: (table: ZonedTable) => string) =>
    `CASE table_id ${(Object.keys(ZONED_TABLES) as ZonedTable[]).map((t) => `WHEN ${ZONED_TABLES[t].id} THEN ${f(t)}`).join(' ')} END`;
  const streamOff = offsetOf('streams');
  const pidLane = [...plan.pids].filter(([a, b]) => a !== b);
  const threadLane = pidLane.length
    ? `lane + ${THREAD_LANE_FACTOR} * (CASE lane / ${THREAD_LANE_FACTOR} ${pidLane.map(([a, b]) => `WHEN ${a} THEN ${b - a}`).join(' ')} ELSE 0 END)`
    : 'lane';
  const laneExpr = zoneCase((t) =>
    ZONED_TABLES[t].laneKind === 'stream' ? (streamOff ? `CASE lane WHEN 0 THEN 0 ELSE lane + ${streamOff} END` : 'lane') : threadLane,
  );
  const zoneColumns = columnsOf('zones');
  const zoneSelect = zoneColumns.map((c) => {
    if (c === 'lane') return laneExpr;
    if (c === 'first_id' || c === 'last_id') return `${c} + ${zoneCase((t) => String(offsetOf(t)))}`;
    const role = MERGE_TABLES.zones!.columns[c];
    if (role === undefined) throw new Error(`merge: column zones.${c} has no role in profiler/merge/tables.ts`);
    return role === 'time' ? plus(c, shift) : c;
  });
  db.exec(`INSERT INTO main.zones (${zoneColumns.join(', ')}) SELECT ${zoneSelect.join(', ')} FROM src.zones`);
  // Rows the input's writer left without zones (a recording never finished) get theirs now, before the next input's rows.
  for (const table of Object.keys(ZONED_TABLES) as ZonedTable[]) {
    const o = plan.ids.get(table);
    if (!o || !counts.get(table)) continue;
    const covered = (db.prepare('SELECT max(last_id) AS m FROM src.zones WHERE table_id = ?').get(ZONED_TABLES[table].id) as { m: number | null }).m ?? 0;
    if (covered >= o.max) continue;
    db.prepare(zonesFromRowsSql(table, undefined, true)).run({ after: Math.max(covered, o.min - 1) + o.off, upto: o.max + o.off });
    db.exec(zoneShapeSql(table));
  }

  // Provenance: this input, then the sources it holds (a merged input), then the rows' ranges.
  db.prepare(
    `INSERT INTO main.sources (id, parent_id, file, host, meta, clock, shift_ns, correction_ns, collectives, residual_ns, residual_max_ns)
    VALUES (?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    sourceId,
    input.abs,
    input.host,
    JSON.stringify(Object.fromEntries(input.meta)),
    align.clock,
    shift,
    align.correctionNs,
    align.collectives,
    align.residualNs,
    align.residualMaxNs,
  );
  if (input.hasSources) {
    db.exec(`INSERT INTO main.sources (id, parent_id, file, host, meta, clock, shift_ns, correction_ns, collectives, residual_ns, residual_max_ns)
      SELECT id + ${sourceId}, coalesce(parent_id + ${sourceId}, ${sourceId}), file, host, meta, clock, shift_ns + ${shift},
        correction_ns + ${align.correctionNs}, collectives, residual_ns, residual_max_ns FROM src.sources ORDER BY id`);
    const rangeOff = `CASE table_name ${[...plan.ids].map(([t, o]) => `WHEN '${t}' THEN ${o.off}`).join(' ')} ELSE 0 END`;
    db.exec(`INSERT INTO main.source_rows (source_id, table_name, first_id, last_id, rows)
      SELECT source_id + ${sourceId}, table_name, first_id + ${rangeOff}, last_id + ${rangeOff}, rows FROM src.source_rows`);
  }
  const range = db.prepare('INSERT INTO main.source_rows (source_id, table_name, first_id, last_id, rows) VALUES (?, ?, ?, ?, ?)');
  for (const [table, o] of plan.ids) {
    const n = counts.get(table) ?? 0;
    if (n > 0) range.run(sourceId, table, o.min + o.off, o.max + o.off, n);
  }
  return { renumbered: plan.renumbered, rows };
}

/**
 * meta duration_ns (first to last API call or GPU operation), from the
 * zones: their spans are their rows', and reading them is reading thousands
 * of rows rather than the job's hundreds of millions (recordedDurationNs).
 */
function durationFromZones(db: Db): number | null {
  const ids = (['kernels', 'memcpys', 'memsets', 'api_calls'] as const).map((t) => ZONED_TABLES[t].id).join(', ');
  const span = db.prepare(`SELECT min(start_ns) AS s, max(end_ns) AS e FROM zones WHERE table_id IN (${ids})`).get() as { s: number | null; e: number | null };
  return span.s !== null && span.e !== null ? span.e - span.s : null;
}

/** The merged recording's meta: what all inputs share, summaries of what they do not. */
function mergedMeta(
  db: Db,
  inputs: Input[],
  origin: bigint,
  sources: MergedSource[],
  mode: AlignMode,
  mergeNotes: string[],
): Record<string, string | number | bigint | boolean | null> {
  const all = (key: string) => inputs.map((i) => i.meta.get(key));
  const same = (key: string) => {
    const v = all(key);
    return v.every((x) => x === v[0]) ? (v[0] ?? null) : null;
  };
  const distinct = (key: string) => [...new Set(all(key).filter((x): x is string => x !== undefined))];
  const hosts = distinct('host');
  const commands = distinct('command');
  const first = inputs[0]!;
  const refWall = first.meta.get('origin_wall_ns');
  const incomplete = inputs.filter((i) => i.meta.get('complete') !== '1');
  const notes = inputs.flatMap((i) => {
    try {
      return (JSON.parse(i.meta.get('notes') ?? '[]') as string[]).map((n) => `${path.basename(i.file)}: ${n}`);
    } catch {
      return [];
    }
  });
  for (const s of sources) {
    if (s.clock !== 'wall-clock') continue;
    notes.push(
      mode === 'wall-clock'
        ? `${path.basename(s.file)}: placed by its recorded times (--align wall-clock): its host's clock, error unknown`
        : `${path.basename(s.file)}: no NCCL collective matched another host's: placed by its recorded times (its host's clock, error unknown)`,
    );
  }
  const started = distinct('started_at').sort();
  const exitCodes = all('exit_code');
  return {
    origin_ns: origin,
    origin_wall_ns: refWall && /^-?\d+$/.test(refWall) ? BigInt(refWall) + (origin - first.origin) : null,
    command: commands.length <= 1 ? (commands[0] ?? null) : `${commands[0]} (and ${commands.length - 1} other command${commands.length > 2 ? 's' : ''})`,
    argv: same('argv'),
    cwd: same('cwd'),
    host: hosts.length <= 1 ? (hosts[0] ?? null) : hosts.length <= 4 ? hosts.join(', ') : `${hosts.slice(0, 3).join(', ')} and ${hosts.length - 3} more hosts`,
    started_at: started[0] ?? null,
    workload: same('workload'),
    scenario: same('scenario'),
    exit_code: exitCodes.every((c) => c === exitCodes[0]) ? (exitCodes[0] ?? null) : (exitCodes.find((c) => c !== undefined && c !== '0') ?? null),
    exit_signal: distinct('exit_signal')[0] ?? null,
    duration_ns: durationFromZones(db),
    wall_time_ms: all('wall_time_ms').reduce<number>((m, v) => Math.max(m, Number(v ?? 0)), 0),
    driver_version: first.meta.get('driver_version') ?? null,
    runtime_version: first.meta.get('runtime_version') ?? null,
    cupti_version: first.meta.get('cupti_version') ?? null,
    dropped_records: all('dropped_records').reduce((s, v) => s + Number(v ?? 0), 0),
    complete: incomplete.length === 0,
    incomplete_reason: incomplete.length
      ? incomplete.map((i) => `${path.basename(i.file)}: ${i.meta.get('incomplete_reason') ?? 'incomplete'}`).join('; ')
      : null,
    notes: JSON.stringify([...notes, ...mergeNotes]),
    capture_range: same('capture_range'),
    source: 'streamscope-merge',
    recorder_version: VERSION,
  };
}
