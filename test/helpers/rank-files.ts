// The per-rank files of one job as `streamscope record` leaves them when
// the job's launcher starts a recorder per rank: each process with its rank
// (torchrun's RANK, LOCAL_RANK, WORLD_SIZE) and its host. CONSTRUCTED, not
// recorded on GPUs: the steps, kernels and NCCL all-reduces are those of
// rank-recordings.ts (through RecordingWriter), which leaves
// processes.host NULL; it is set here as the recorder sets it (with the
// rank on its host), because the timeline and opening several files as one
// job go by them.
import path from 'node:path';
import Database from 'better-sqlite3';
import { writeRankRecording } from './rank-recordings.ts';

/** True time of every constructed job's start, ns since the epoch. */
const JOB = 1_795_000_000_000_000_000n;

export interface RankFilesOptions {
  /** Which ranks to write (default all of 0 … world − 1). */
  ranks?: number[];
  /** Ranks per host (default 2): host h holds ranks h·perHost …, named node-h, its clock off by h × 370 µs. */
  perHost?: number;
  /** Ranks recorded without collectives (their clocks cannot be aligned). */
  withoutCollectives?: number[];
  steps?: number;
}

/** Writes `dir/<name>-rank<r>.sqlite` for each rank; returns their paths in rank order. */
export function writeRankFiles(dir: string, name: string, world: number, opts: RankFilesOptions = {}): string[] {
  const perHost = opts.perHost ?? 2;
  return (opts.ranks ?? Array.from({ length: world }, (_, r) => r)).map((rank) => {
    const file = path.join(dir, `${name}-rank${rank}.sqlite`);
    const node = Math.floor(rank / perHost);
    const host = `node-${node}`;
    writeRankRecording(
      {
        file,
        host,
        rank,
        clockOffsetNs: node * 370_000,
        originNs: JOB + BigInt(rank * 250_000),
        steps: opts.steps ?? 20,
        jitterNs: 800,
        worldSize: world,
        collectives: !opts.withoutCollectives?.includes(rank),
      },
      JOB,
    );
    // Its host, and its rank on the host (rank-recordings.ts gives LOCAL_RANK = RANK, one rank per host).
    const db = new Database(file);
    try {
      db.prepare('UPDATE processes SET host = ?, local_rank = ?').run(host, rank % perHost);
      db.prepare("UPDATE process_env SET value = ? WHERE name = 'LOCAL_RANK'").run(String(rank % perHost));
    } finally {
      db.close();
    }
    return file;
  });
}
