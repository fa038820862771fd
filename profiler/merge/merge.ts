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
//    origin from the merged one plus its host's clock correction
//    (align.ts: from the NCCL collectives the ranks share; the wall clock
//    when they share none);
//  - provenance: a sources row per input (file, host, meta, shift,
//    correction, residual), a source_rows range per input and table, and
//    processes.source_id. A merged input's own sources come along as its
//    children, so a merge of merges keeps both levels.
//
// Written to a temporary file beside the output and renamed when complete:
// a merge that fails leaves nothing, and never replaces an existing file.
import fs from 'node:fs';
import path from 'node:path';
import { VERSION } from '../contract/version.ts';
import { beginBulkLoad, compact, createRecording, endBulkLoad, openRecording, readMeta, writeMeta, type Db } from '../store/database.ts';
import { latestSchemaVersion } from '../store/migrations/index.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { THREAD_LANE_FACTOR, ZONED_TABLES, zoneShapeSql, zonesFromRowsSql, type ZonedTable } from '../store/zone-tables.ts';
import { alignClocks, type ClockMethod, type InputAlignment } from './align.ts';
import { readCollectives } from './collectives.ts';
import { MERGE_TABLES, type Role } from './tables.ts';

export type AlignMode = 'collectives' | 'wall-clock';

export interface MergeOptions {
  /** Replace an existing output (`--force`). */
  overwrite?: boolean;
  /** collectives (default): each host's clock corrected by the NCCL collectives; wall-clock: times as recorded. */
  align?: AlignMode;
  /** After each input is copied. */
  onProgress?: (done: number, total: number, file: string) => void;
}

export interface MergedSource {
  /** As given. */
  file: string;
  host: string | null;
  clock: ClockMethod;
  /** Added to each of its times. */
  shiftNs: number;
  correctionNs: number;
  collectives: number;
  residualNs: number | null;
  residualMaxNs: number | null;
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
}

/** Linux pids and tids stay below 2^22; a thread lane is pid * 2^22 + tid, so renumbered pids must too. */
const MAX_PID = THREAD_LANE_FACTOR - 1;

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
}

/** Merges `inputs` into a new recording at `output`. Problems with a file are RecordingFileErrors naming it. */
export function mergeRecordings(inputs: readonly string[], output: string, opts: MergeOptions = {}): MergeResult {
  const t0 = performance.now();
  if (inputs.length === 0) throw new RecordingFileError(output, 'nothing to merge: give the recordings to merge');
  if (fs.existsSync(output) && !opts.overwrite) throw new RecordingFileError(output, 'already exists (use --force to overwrite)');
  const outAbs = path.resolve(output);
  const seen = new Map<string, string>();
  const outStat = fs.existsSync(output) ? fs.statSync(output) : null;
  for (const file of inputs) {
    if (!fs.existsSync(file)) throw new RecordingFileError(file, 'no such file');
    const st = fs.statSync(file);
    const id = `${st.dev}:${st.ino}`;
    if (seen.has(id)) throw new RecordingFileError(file, `given twice (also as ${seen.get(id)}): each recording can be merged once`);
    seen.set(id, file);
    if (path.resolve(file) === outAbs || (outStat && outStat.dev === st.dev && outStat.ino === st.ino))
      throw new RecordingFileError(file, 'is the output as well: merge into a new file');
  }

  // Every input read and checked before anything is written.
  const list: Input[] = inputs.map((file) => inspect(file));
  const identities = new Map<string, string>();
  for (const input of list) {
    for (const id of input.identities) {
      const other = identities.get(id);
      if (other !== undefined)
        throw new RecordingFileError(input.file, `holds the same recording as ${other} (same host and origin): each recording can be merged once`);
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
  const originOut = corrected.reduce((m, o) => (o < m ? o : m), corrected[0]!);
  const shifts = corrected.map((o) => Number(o - originOut));

  // Written beside the output, renamed into place at the end.
  const partial = path.join(path.dirname(outAbs), `.${path.basename(outAbs)}.merging-${process.pid}`);
  const db = createRecording(partial, { overwrite: true });
  const sources: MergedSource[] = [];
  try {
    db.pragma('foreign_keys = OFF'); // every reference is remapped by construction; test/merge checks foreign_key_check
    db.pragma('journal_mode = OFF'); // a failed merge deletes the file: no rollback needed
    db.pragma('synchronous = OFF'); // synced once, before the rename
    db.pragma('temp_store = MEMORY');
    db.pragma('cache_size = -262144');
    const missing = unclassified(db);
    if (missing.length) throw new Error(`merge: profiler/merge/tables.ts does not say how to merge ${missing.join(', ')}`);
    beginBulkLoad(db);
    db.exec('CREATE TEMP TABLE merge_strings (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)');
    const reserved = new Set(list.flatMap((i) => i.pids));
    const state: CopyState = { usedPids: new Set(), reserved, nextPid: MAX_PID };
    list.forEach((input, i) => {
      const a = alignment[i]!;
      const copied = copyInput(db, input, shifts[i]!, a, state);
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
    writeMeta(db, mergedMeta(db, list, originOut, sources, opts.align ?? 'collectives', notes));
    endBulkLoad(db);
    compact(db, partial);
    db.pragma('journal_mode = DELETE');
    // Rows per table: what was copied, and the tables merge wrote itself (small) counted.
    const rows: Record<string, number> = {};
    for (const s of sources) for (const [t, n] of Object.entries(s.rows)) rows[t] = (rows[t] ?? 0) + n;
    for (const t of db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[])
      if (!(t in rows)) rows[t] = (db.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n;
    db.close();
    const fd = fs.openSync(partial, 'r+');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(partial, output);
    return {
      output,
      sources,
      rows,
      devices: rows.devices!,
      processes: rows.processes!,
      notes,
      seconds: (performance.now() - t0) / 1000,
    };
  } catch (err) {
    try {
      db.close();
    } catch {
      // closed already
    }
    for (const f of [partial, `${partial}-journal`]) fs.rmSync(f, { force: true });
    throw err;
  }
}

/**
 * Collectives are matched by their order: a recording that does not hold
 * the same ones as the others (a capture range, dropped records, a rank
 * that joined late) is matched one collective off, by as many steps as it
 * lacks, which the residual of a steady, periodic job does not show. Said
 * when the counts differ.
 */
function collectiveCountNotes(list: Input[], alignment: InputAlignment[]): string[] {
  const countOf = (input: Input) => Math.max(0, ...[...input.collectives.values()].map((keys) => keys.size));
  const aligned = list.filter((input, i) => alignment[i]!.collectives > 0 && countOf(input) > 0);
  if (aligned.length < 2) return [];
  const counts = aligned.map(countOf);
  const most = Math.max(...counts);
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
function followHosts(list: Input[], alignment: InputAlignment[]): void {
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
    const inner = db.prepare('SELECT host, meta FROM sources WHERE id NOT IN (SELECT parent_id FROM sources WHERE parent_id IS NOT NULL)').all() as {
      host: string | null;
      meta: string;
    }[];
    const identities = inner.length
      ? inner.map((s) => `${s.host ?? ''}|${(JSON.parse(s.meta) as Record<string, string>).origin_ns ?? ''}`)
      : [`${host ?? ''}|${originText}`];
    const abs = path.resolve(file);
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
    };
  } finally {
    db.close();
  }
}

interface CopyState {
  /** pids of the merged recording so far. */
  usedPids: Set<number>;
  /** Every input's own pids: a renumbered process takes none of them. */
  reserved: Set<number>;
  nextPid: number;
}

/** SQL for `n` added to a column (nothing when 0). */
function plus(column: string, n: number | bigint): string {
  return n === 0 || n === 0n ? column : `(${column} + ${n})`;
}

/**
 * `column` with the values `map` moves replaced: the column itself when
 * nothing moves; plus a constant when every value moves by one (a rank's
 * devices, its one process, as a rule) and `onlyKeys` says the column
 * holds no other values; else a CASE, where values not in the map stay
 * (`keepOthers`) or become NULL.
 */
function mapped(column: string, map: Map<number, number>, opts: { keepOthers: boolean; onlyKeys: boolean }): string {
  const pairs = [...map];
  if (pairs.every(([a, b]) => a === b)) return column;
  const d = pairs[0]![1] - pairs[0]![0];
  if (opts.onlyKeys && pairs.every(([a, b]) => b - a === d)) return plus(column, d);
  const listed = opts.keepOthers ? pairs.filter(([a, b]) => a !== b) : pairs;
  return `CASE ${column} ${listed.map(([a, b]) => `WHEN ${a} THEN ${b}`).join(' ')} ELSE ${opts.keepOthers ? column : 'NULL'} END`;
}

function copyInput(db: Db, input: Input, shift: number, align: InputAlignment, state: CopyState) {
  // Read only: nothing here writes to src (SQLite in better-sqlite3 takes no URI filenames, so no mode=ro).
  db.prepare('ATTACH DATABASE ? AS src').run(input.abs);
  try {
    db.exec('BEGIN');
    const result = copyAttached(db, input, shift, align, state);
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    const e = err as { code?: string; message: string };
    if (e instanceof RecordingFileError) throw err;
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

function copyAttached(db: Db, input: Input, shift: number, align: InputAlignment, state: CopyState) {
  const columnsOf = (table: string) => columnsOfTable(db, table);
  const tables = new Set(db.prepare("SELECT name FROM main.sqlite_schema WHERE type = 'table'").pluck().all() as string[]);

  // Strings: by value.
  let stringsIdentity: boolean;
  if (maxId(db, 'main', 'strings') === 0) {
    db.exec('INSERT INTO main.strings SELECT * FROM src.strings');
    stringsIdentity = true;
  } else {
    db.exec(`INSERT INTO main.strings (value, demangled) SELECT value, demangled FROM src.strings s
      WHERE NOT EXISTS (SELECT 1 FROM main.strings m WHERE m.value = s.value) ORDER BY s.id`);
    db.exec('DELETE FROM temp.merge_strings');
    db.exec('INSERT INTO temp.merge_strings SELECT s.id, m.id FROM src.strings s JOIN main.strings m ON m.value = s.value');
    stringsIdentity = (db.prepare('SELECT count(*) AS n FROM temp.merge_strings WHERE old <> new').get() as { n: number }).n === 0;
  }

  // Devices: by uuid.
  const devices = new Map<number, number>();
  const deviceCols = columnsOf('devices');
  const byUuid = db.prepare('SELECT id FROM main.devices WHERE uuid = ?').pluck();
  const insertDevice = db.prepare(`INSERT INTO main.devices (${deviceCols.join(', ')}) VALUES (${deviceCols.map(() => '?').join(', ')})`);
  const fill = db.prepare(
    `UPDATE main.devices SET ${deviceCols
      .filter((c) => c !== 'id' && c !== 'uuid')
      .map((c) => `${c} = coalesce(${c}, @${c})`)
      .join(', ')} WHERE id = @id`,
  );
  for (const d of db.prepare('SELECT * FROM src.devices ORDER BY id').all() as Record<string, unknown>[]) {
    const existing = d.uuid !== null ? (byUuid.get(d.uuid) as number | undefined) : undefined;
    if (existing !== undefined) {
      fill.run({ ...d, id: existing });
      devices.set(d.id as number, existing);
    } else {
      const id = maxId(db, 'main', 'devices') + 1;
      insertDevice.run(deviceCols.map((c) => (c === 'id' ? id : d[c])));
      devices.set(d.id as number, id);
    }
  }

  // pids: kept unless taken.
  const pids = new Map<number, number>();
  const renumbered: { originalPid: number; pid: number }[] = [];
  for (const pid of input.pids) {
    let to = pid;
    if (state.usedPids.has(pid)) {
      while (state.nextPid > 0 && (state.usedPids.has(state.nextPid) || state.reserved.has(state.nextPid))) state.nextPid--;
      if (state.nextPid <= 0) throw new RecordingFileError(input.file, 'no free pid left to give its processes');
      to = state.nextPid--;
      renumbered.push({ originalPid: pid, pid: to });
    }
    pids.set(pid, to);
    state.usedPids.add(to);
  }

  // Offsets of the tables with ids of their own.
  const sourceId = maxId(db, 'main', 'sources') + 1;
  // The input's ids min..max land at min + off..max + off, right after the rows already there.
  // (Two queries: SQLite answers a lone min() or max() of a rowid with one b-tree descent.)
  const offsets = new Map<string, { off: number; min: number; max: number; count: number }>();
  for (const [table, spec] of Object.entries(MERGE_TABLES)) {
    if (spec.how !== 'rows' || !tables.has(table)) continue;
    const idRole = spec.columns.id;
    if (idRole !== 'rowid' && idRole !== 'context' && idRole !== 'stream') continue;
    const min = (db.prepare(`SELECT min(id) AS m FROM src.${table}`).get() as { m: number | null }).m ?? 1;
    const max = maxId(db, 'src', table);
    offsets.set(table, { off: maxId(db, 'main', table) + 1 - min, min, max, count: 0 });
  }
  const offsetOf = (table: string) => offsets.get(table)?.off ?? 0;
  const renumberedPids = renumbered.map((r) => r.originalPid);
  // A few moved strings (ranks of one program name their kernels alike): a CASE; many: a lookup per row.
  const movedStrings = stringsIdentity ? [] : (db.prepare('SELECT old, new FROM temp.merge_strings WHERE old <> new').raw().all() as [number, number][]);
  const stringExpr = (column: string) =>
    movedStrings.length === 0
      ? column
      : movedStrings.length <= 16
        ? `CASE ${column} ${movedStrings.map(([a, b]) => `WHEN ${a} THEN ${b}`).join(' ')} ELSE ${column} END`
        : `(SELECT new FROM temp.merge_strings WHERE old = ${column})`;

  /** SQL for one column of the input's rows as the merged recording holds it; null: left to SQLite (the rowid, numbered in order). */
  const expr = (table: string, column: string, role: Role, explicitIds: boolean): string | null => {
    switch (role) {
      case 'keep':
        return column;
      case 'time':
        return plus(column, shift);
      case 'pid':
        // Every pid column names one of the input's processes, except a parent's (ppid), which may be outside it.
        return mapped(column, pids, { keepOthers: true, onlyKeys: column !== 'ppid' });
      case 'device':
        return mapped(column, devices, { keepOthers: false, onlyKeys: true });
      case 'context':
        return plus(column, offsetOf('contexts'));
      case 'stream':
        return plus(column, offsetOf('streams'));
      case 'string':
        return stringExpr(column);
      case 'rowid':
        return explicitIds ? plus(column, offsets.get(table)!.off) : null;
      case 'source':
        return input.hasSources ? `(${column} + ${sourceId})` : `${sourceId}`;
      case 'original-pid':
        return renumberedPids.length ? `CASE WHEN pid IN (${renumberedPids.join(',')}) THEN coalesce(${column}, pid) ELSE ${column} END` : column;
    }
  };

  // Every table of rows, in order: what a row refers to is there before it.
  const rows: Record<string, number> = {};
  const copy = (table: string, explicitIds: boolean): number => {
    const spec = MERGE_TABLES[table]!;
    const target: string[] = [];
    const select: string[] = [];
    for (const column of columnsOf(table)) {
      const e = expr(table, column, spec.columns[column]!, explicitIds);
      if (e === null) continue;
      target.push(column);
      select.push(e);
    }
    const order = spec.columns.id === 'rowid' ? ' ORDER BY id' : '';
    return db.prepare(`INSERT INTO main.${table} (${target.join(', ')}) SELECT ${select.join(', ')} FROM src.${table}${order}`).run().changes;
  };
  for (const [table, spec] of Object.entries(MERGE_TABLES)) {
    if (spec.how !== 'rows' || !tables.has(table)) continue;
    const o = offsets.get(table);
    let n: number;
    if (spec.columns.id === 'rowid') {
      // SQLite numbering the rows itself (max + 1, in id order) is cheaper than checking each given id; right when the
      // input's ids have no gaps. When they have (rows a capture range left out), copied again with their ids moved.
      const before = maxId(db, 'main', table);
      n = copy(table, false);
      if (n > 0 && n !== o!.max - o!.min + 1) {
        db.prepare(`DELETE FROM main.${table} WHERE id > ?`).run(before);
        n = copy(table, true);
      }
      if (n > 0 && maxId(db, 'main', table) !== o!.max + o!.off)
        throw new Error(`merge: ${table} of ${input.file} did not land at ids ${o!.min + o!.off}..${o!.max + o!.off} (from ${before + 1})`);
    } else {
      n = copy(table, true);
    }
    if (o) o.count = n;
    rows[table] = n;
  }

  // Zones: the input's own, moved with its rows.
  const zoneCase = (f: (table: ZonedTable) => string) =>
    `CASE table_id ${(Object.keys(ZONED_TABLES) as ZonedTable[]).map((t) => `WHEN ${ZONED_TABLES[t].id} THEN ${f(t)}`).join(' ')} END`;
  const streamOff = offsetOf('streams');
  const pidLane = [...pids].filter(([a, b]) => a !== b);
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
    const o = offsets.get(table);
    if (!o || o.count === 0) continue;
    const covered = (db.prepare('SELECT max(last_id) AS m FROM src.zones WHERE table_id = ?').get(ZONED_TABLES[table].id) as { m: number | null }).m ?? 0;
    if (covered >= o.max) continue;
    db.prepare(zonesFromRowsSql(table)).run({ after: Math.max(covered, o.min - 1) + o.off });
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
    const rangeOff = `CASE table_name ${[...offsets].map(([t, o]) => `WHEN '${t}' THEN ${o.off}`).join(' ')} ELSE 0 END`;
    db.exec(`INSERT INTO main.source_rows (source_id, table_name, first_id, last_id, rows)
      SELECT source_id + ${sourceId}, table_name, first_id + ${rangeOff}, last_id + ${rangeOff}, rows FROM src.source_rows`);
  }
  const range = db.prepare('INSERT INTO main.source_rows (source_id, table_name, first_id, last_id, rows) VALUES (?, ?, ?, ?, ?)');
  for (const [table, o] of offsets) if (o.count > 0) range.run(sourceId, table, o.min + o.off, o.max + o.off, o.count);
  return { renumbered, rows };
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
    wall_time_ms: Math.max(0, ...all('wall_time_ms').map((v) => Number(v ?? 0))),
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
