// Checks that the zones a writer left in a recording (the native ingest's,
// usually) hold what the SQL zoner computes from the rows: busy time
// (schema 5) and shape (schema 6). Used on synthetic streams in CI and on
// every recording the GPU tests make.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ZONED_TABLES, zoneBusySql, zoneShapeSql, type ZonedTable } from '../../profiler/store/zone-tables.ts';

const COLUMNS = 'SELECT table_id, lane, first_id, busy_ns, max_dur_ns, max_gap_ns, copy_kind_rows FROM zones ORDER BY table_id, lane, first_id';

export type ZoneRow = Record<string, number | string | null>;

/** The zones as written, and as the SQL zoner recomputes them on a copy (`scratchDir`). */
export function zonesWrittenAndRecomputed(file: string, scratchDir: string): { written: ZoneRow[]; recomputed: ZoneRow[] } {
  const read = (f: string) => {
    const db = new Database(f, { readonly: true });
    try {
      return db.prepare(COLUMNS).all() as ZoneRow[];
    } finally {
      db.close();
    }
  };
  const copy = path.join(scratchDir, `${path.basename(file, '.sqlite')}-zones-recomputed.sqlite`);
  fs.copyFileSync(file, copy);
  const db = new Database(copy);
  try {
    db.exec('UPDATE zones SET busy_ns = NULL, max_dur_ns = NULL, max_gap_ns = NULL, copy_kind_rows = NULL');
    for (const t of Object.keys(ZONED_TABLES) as ZonedTable[]) db.exec(`${zoneBusySql(t)}; ${zoneShapeSql(t)}`);
  } finally {
    db.close();
  }
  try {
    return { written: read(file), recomputed: read(copy) };
  } finally {
    fs.rmSync(copy, { force: true });
  }
}

/**
 * What breaks the zone rules (SCHEMA.md "Zones") in a recording, in words:
 * a row in no zone of its lane or in several, a zone whose row count,
 * span or correlation range is not that of its rows. Empty when they hold.
 */
export function zoneRuleProblems(file: string): string[] {
  const db = new Database(file, { readonly: true });
  const problems: string[] = [];
  try {
    for (const table of Object.keys(ZONED_TABLES) as ZonedTable[]) {
      const t = ZONED_TABLES[table];
      const r = (sql: string) => sql.replace(/\b(stream_id|pid|tid|start_ns|end_ns|correlation_id)\b/g, 'r.$1');
      const covered = db
        .prepare(
          `SELECT r.id, (SELECT count(*) FROM zones z WHERE z.table_id = ${t.id}
          AND r.id BETWEEN z.first_id AND z.last_id AND z.lane = ${r(t.lane)}) AS n FROM ${table} r`,
        )
        .all() as { id: number; n: number }[];
      for (const c of covered) if (c.n !== 1) problems.push(`${table} row ${c.id} is in ${c.n} zones of its lane`);
      const zones = db
        .prepare(
          `SELECT z.lane, z.first_id, z.rows, z.start_ns, z.end_ns, z.min_correlation, z.max_correlation,
          (SELECT count(*) FROM ${table} r WHERE r.id BETWEEN z.first_id AND z.last_id AND ${r(t.lane)} = z.lane) AS n,
          (SELECT min(r.start_ns) FROM ${table} r WHERE r.id BETWEEN z.first_id AND z.last_id AND ${r(t.lane)} = z.lane) AS s,
          (SELECT max(${r(t.end)}) FROM ${table} r WHERE r.id BETWEEN z.first_id AND z.last_id AND ${r(t.lane)} = z.lane) AS e,
          (SELECT min(${r(t.correlation)}) FROM ${table} r WHERE r.id BETWEEN z.first_id AND z.last_id AND ${r(t.lane)} = z.lane) AS c0,
          (SELECT max(${r(t.correlation)}) FROM ${table} r WHERE r.id BETWEEN z.first_id AND z.last_id AND ${r(t.lane)} = z.lane) AS c1
        FROM zones z WHERE z.table_id = ${t.id}`,
        )
        .all() as Record<string, number | null>[];
      for (const z of zones) {
        const where = `${table} zone (lane ${z.lane}, first id ${z.first_id})`;
        if (z.rows !== z.n) problems.push(`${where} says ${z.rows} rows, holds ${z.n}`);
        if (z.n && (z.start_ns !== z.s || z.end_ns !== z.e)) problems.push(`${where} spans ${z.start_ns}..${z.end_ns}, its rows ${z.s}..${z.e}`);
        if (z.n && (z.min_correlation !== z.c0 || z.max_correlation !== z.c1))
          problems.push(`${where} correlation ${z.min_correlation}..${z.max_correlation}, its rows ${z.c0}..${z.c1}`);
      }
    }
  } finally {
    db.close();
  }
  return problems;
}
