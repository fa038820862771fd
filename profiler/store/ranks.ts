// Each process's rank (processes.rank, local_rank, world_size,
// rank_variable; schema 8), from the variables its collector recorded
// (process_env), by the launchers' rules of profiler/contract/ranks.ts.
import { NO_RANK, rankFromEnv, type RankedProcess } from '../contract/ranks.ts';
import type { Db } from './database.ts';

/**
 * Fills the rank columns of every process from its process_env rows; a
 * process without a launcher's rank gets NULLs. Run when a recording is
 * finished (the recorder, `streamscope ingest`). Returns how many processes
 * have a rank.
 */
export function storeRanks(db: Db): number {
  const env = new Map<number, Record<string, string>>();
  for (const r of db.prepare('SELECT pid, name, value FROM process_env').all() as { pid: number; name: string; value: string }[]) {
    const vars = env.get(r.pid) ?? {};
    vars[r.name] = r.value;
    env.set(r.pid, vars);
  }
  const update = db.prepare('UPDATE processes SET rank = ?, local_rank = ?, world_size = ?, rank_variable = ? WHERE pid = ?');
  let ranked = 0;
  db.transaction(() => {
    for (const pid of db.prepare('SELECT pid FROM processes').pluck().all() as number[]) {
      const r = rankFromEnv(env.get(pid) ?? {});
      update.run(r.rank, r.localRank, r.worldSize, r.rankVariable, pid);
      if (r.rank !== null) ranked++;
    }
  })();
  return ranked;
}

/** Every process of a recording with its rank, by pid. */
export function readProcesses(db: Db): RankedProcess[] {
  const rows = db
    .prepare(
      `SELECT pid, command, host, complete, rank, local_rank AS localRank, world_size AS worldSize, rank_variable AS rankVariable
      FROM processes ORDER BY pid`,
    )
    .all() as (Omit<RankedProcess, 'complete'> & { complete: number })[];
  return rows.map((p) => ({ ...NO_RANK, ...p, complete: p.complete === 1 }));
}
