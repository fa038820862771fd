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
