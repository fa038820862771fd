// What a job's start-up reads of the recording (job-scope.ts jobStartup):
// the zones first, then only the rows they cannot settle — the calls that
// could be start-up calls, filtered natively, and the operations of the
// zones that reach into the band where a tenth of the work is done — and
// the names of the calls it read. What it reads depends on what it found,
// so it is handed these reads, not their results.
import { CALL_COLUMNS, loadRows, type CallColumns, type ColumnPool, type LoadRowsOptions, type OpColumns, type RowRanges } from '../../native/addon.ts';
import type { Ns } from '../../contract/time.ts';
import type { Db } from '../../store/database.ts';
import { ZONED_TABLES } from '../../store/zone-tables.ts';
import { callNames } from './calls.ts';
import { readZones, type Zone } from './zones.ts';

export interface StartupReader {
  /** The zones of these tables (ZONED_TABLES ids). */
  zones(tables: number[]): Zone[];
  /** The calls of these id ranges (flat, sorted, touching ranges joined), in (start, id) order, as `only` filters them. */
  calls(ranges: number[], only: Pick<LoadRowsOptions, 'maxStart' | 'callNames' | 'callMinNs'>): CallColumns;
  /** The operations of these id ranges, of these zones only (lane, first, last per zone), in start order: their kind, start and end. */
  ops(ranges: RowRanges, zones: RowRanges): OpColumns;
  /** The names of these calls (calls.ts callNames). */
  names(calls: CallColumns): Map<number, string>;
}

/** The reads of `db`, whose file is `file`, into `pool`'s columns. */
export function startupReader(db: Db, file: string, pool: ColumnPool): StartupReader {
  return {
    zones: (tables) => readZones(db, tables),
    calls: (apiCalls, only) => loadRows(file, { apiCalls }, only, pool).calls,
    ops: (ranges, zones) => loadRows(file, ranges, { narrow: true, zones, opColumns: ['kind', 'start', 'end'] }, pool).ops,
    names: (calls) => callNames(db, calls),
  };
}

/**
 * Where one recording's rows land among a job's, as a merge places them (job/job-cut.ts): its times' shift, each
 * table's id run, its pids and its string ids.
 */
export interface PlacedRecording {
  file: string;
  db: Db;
  shift: Ns;
  /** Per table: its ids min..max land at min + off..max + off. */
  ids: Map<string, { off: number; min: number; max: number }>;
  pids: Map<number, number>;
  strings: Map<number, number>;
}

const TABLE_OF_ID = new Map(Object.entries(ZONED_TABLES).map(([name, t]) => [t.id, name]));
const OP_KEYS = ['kernels', 'memcpys', 'memsets'] as const;

/**
 * The reads of start-up (job-scope.ts startupOfZones) over several recordings at once, as one recording of them merged
 * (job/job-cut.ts): each one's rows placed as `placed` says; `strings`: the job's, by the ids `placed` maps to.
 */
export function placedStartupReader(placed: readonly PlacedRecording[], strings: ReadonlyMap<number, string>, pool: ColumnPool): StartupReader {
  const off = (i: number, table: string) => placed[i]!.ids.get(table)?.off ?? 0;
  // Each recording's ids of a table, in the job's ids: a job id's recording is the one whose run holds it.
  const runsOf = new Map(
    ['api_calls', ...OP_KEYS].map((table) => [
      table,
      placed.flatMap((p, i) => {
        const run = p.ids.get(table);
        return run ? [{ i, lo: run.min + run.off, hi: run.max + run.off, off: run.off }] : [];
      }),
    ]),
  );
  /** Flat job-id ranges of `table` → each recording's own flat ranges. */
  const split = (table: string, ranges: readonly number[]) => {
    const out = placed.map((): number[] => []);
    for (const run of runsOf.get(table)!) {
      for (let k = 0; k + 1 < ranges.length; k += 2) {
        const lo = Math.max(ranges[k]!, run.lo);
        const hi = Math.min(ranges[k + 1]!, run.hi);
        if (lo <= hi) out[run.i]!.push(lo - run.off, hi - run.off);
      }
    }
    return out;
  };
  const runOf = (table: string, id: number) => runsOf.get(table)!.find((r) => id >= r.lo && id <= r.hi);
  // The job's string ids → each recording's own (the calls' name filter).
  const ownStringIds = placed.map((p) => new Map([...p.strings].map(([own, job]) => [job, own])));

  const reader: StartupReader = {
    zones: (tables) =>
      placed.flatMap(({ db, shift }, i) =>
        readZones(db, tables).map((z): Zone => {
          const o = off(i, TABLE_OF_ID.get(z.table)!);
          return { ...z, start: z.start + shift, end: z.end + shift, first: z.first + o, last: z.last + o };
        }),
      ),
    calls: (ranges, only) => {
      const parts = split('api_calls', ranges).map((own, i) => {
        const { file, shift, pids, strings: names } = placed[i]!;
        if (own.length === 0) return null;
        const asked: Pick<LoadRowsOptions, 'maxStart' | 'callNames' | 'callMinNs'> = { ...only };
        if (only.maxStart !== undefined) asked.maxStart = only.maxStart - shift;
        if (only.callNames) asked.callNames = only.callNames.flatMap((id) => ownStringIds[i]!.get(id) ?? []);
        const c = copyCalls(loadRows(file, { apiCalls: own }, asked, pool).calls);
        const o = off(i, 'api_calls');
        for (let k = 0; k < c.length; k++) {
          c.rowId[k]! += o;
          c.start[k]! += shift;
          c.end[k]! += shift;
          c.pid[k] = pids.get(c.pid[k]!) ?? c.pid[k]!;
          c.nameId[k] = names.get(c.nameId[k]!) ?? c.nameId[k]!;
        }
        return c;
      });
      return sortedCalls(parts.filter((c): c is CallColumns => c !== null));
    },
    ops: (ranges, zones) => {
      const starts: number[] = [];
      const ends: number[] = [];
      const kinds: number[] = [];
      placed.forEach((p, i) => {
        const own: RowRanges = {};
        const keep: RowRanges = {};
        let any = false;
        for (const key of OP_KEYS) {
          const r = ranges[key];
          if (!r) continue;
          own[key] = split(key, r)[i]!;
          // Zones as [lane, first, last]: this file's, in its own ids.
          const z = zones[key] ?? [];
          const mine: number[] = [];
          for (let k = 0; k + 2 < z.length; k += 3) {
            const run = runOf(key, z[k + 1]!);
            if (run?.i === i) mine.push(z[k]!, z[k + 1]! - run.off, z[k + 2]! - run.off);
          }
          keep[key] = mine;
          any ||= own[key]!.length > 0;
        }
        if (!any) return;
        const ops = loadRows(p.file, own, { narrow: true, zones: keep, opColumns: ['kind', 'start', 'end'] }, pool).ops;
        for (let k = 0; k < ops.length; k++) {
          starts.push(ops.start[k]! + p.shift);
          ends.push(ops.end[k]! + p.shift);
          kinds.push(ops.kind[k]!);
        }
      });
      const order = starts.map((_, k) => k).sort((a, b) => starts[a]! - starts[b]! || a - b);
      return {
        length: order.length,
        start: Float64Array.from(order, (k) => starts[k]!),
        end: Float64Array.from(order, (k) => ends[k]!),
        kind: Uint8Array.from(order, (k) => kinds[k]!),
      } as unknown as OpColumns;
    },
    names: (calls) => {
      const names = new Map<number, string>();
      for (let k = 0; k < calls.length; k++) {
        const id = calls.nameId[k]!;
        const name = strings.get(id);
        if (name !== undefined) names.set(id, name);
      }
      return names;
    },
  };
  return reader;
}

/** The calls out of a pool's columns (views until its next load). */
function copyCalls(c: CallColumns): CallColumns {
  const out = { length: c.length } as Record<string, unknown>;
  for (const name of Object.keys(CALL_COLUMNS) as (keyof typeof CALL_COLUMNS)[]) out[name] = c[name].slice(0, c.length);
  return out as unknown as CallColumns;
}

/** Calls of several files in one (start, id) order, as a merged recording's load orders them. */
function sortedCalls(parts: CallColumns[]): CallColumns {
  const at: [number, number][] = parts.flatMap((c, p) => Array.from({ length: c.length }, (_, k): [number, number] => [p, k]));
  at.sort(([p, k], [q, j]) => parts[p]!.start[k]! - parts[q]!.start[j]! || parts[p]!.rowId[k]! - parts[q]!.rowId[j]!);
  const out = { length: at.length } as Record<string, unknown>;
  for (const [name, type] of Object.entries(CALL_COLUMNS) as [keyof typeof CALL_COLUMNS, string][]) {
    const col = new globalThis[type as 'Float64Array'](at.length);
    at.forEach(([p, k], n) => (col[n] = parts[p]![name][k]!));
    out[name] = col;
  }
  return out as unknown as CallColumns;
}
