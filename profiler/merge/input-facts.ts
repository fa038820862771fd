// What planning a merge needs of one recording (plan.ts InputFacts): its
// strings and devices, its pids, each id table's smallest and largest id,
// its largest source id. Read by the merge as it inspects an input, and by
// a rank's summary (profiler/job/summary.ts), whose ids are planned the
// same way so that a job analysed from summaries names every pid, device
// and row as the merged recording of the same files would.
import type { Db } from '../store/database.ts';
import { ID_TABLES, type InputFacts } from './plan.ts';

export function readInputFacts(db: Db, pids = db.prepare('SELECT pid FROM processes ORDER BY pid').pluck().all() as number[]): InputFacts {
  const tables = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]);
  const ids: InputFacts['ids'] = {};
  // (Two queries: SQLite answers a lone min() or max() of a rowid with one b-tree descent.)
  for (const t of ID_TABLES.filter((t) => tables.has(t)))
    ids[t] = {
      min: db.prepare(`SELECT min(id) FROM ${t}`).pluck().get() as number | null,
      max: db.prepare(`SELECT max(id) FROM ${t}`).pluck().get() as number | null,
    };
  return {
    strings: db.prepare('SELECT id, value FROM strings ORDER BY id').raw().all() as [number, string][],
    devices: db.prepare('SELECT id, uuid FROM devices ORDER BY id').raw().all() as [number, string | null][],
    pids,
    ids,
    maxSourceId: (db.prepare('SELECT max(id) FROM sources').pluck().get() as number | null) ?? 0,
  };
}
