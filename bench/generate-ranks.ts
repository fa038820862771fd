// Generated per-rank recordings of a data-parallel job, for the merge
// benchmark (issue 13 part 5: 64 ranks × 8 streams, 1 M operations per
// rank). One rank is generated (bench/generate-recording.ts: kernels and
// copies on 7 streams, each with its launch call, and one NCCL all-reduce
// per 100 operations on the 8th), then copied once per rank and made that
// rank's:
//
//  - its own host (node-000, node-001, …), one rank per node, and its own
//    GPU (uuid), GPU 0 of its host; with `withRanks` (--with-ranks) its
//    rank as torchrun sets it (RANK, LOCAL_RANK, WORLD_SIZE), else none;
//  - the same pid on every rank (as in containers): merge must renumber;
//  - its host's clock off by a known amount (origin_ns moved by up to
//    ± 5 ms): merge must find it from the collectives, which end at the
//    same true time on every rank (the copies' times are the template's);
//  - its kernel names interned in another order (the strings' ids
//    rotated), so merge maps names by value, as it must for real ranks.
//
// Copying is what makes 64 ranks of 1 M operations take a minute rather
// than the 7 minutes of generating each.
//
//   node bench/generate-ranks.ts -o DIR [--ranks 64] [--ops 1000000] [--streams 8] [--with-ranks]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { generate } from './generate-recording.ts';

/** True time of the job's start (ns since the epoch) as the reference rank's clock reads it. */
const JOB_ORIGIN = 1_795_000_000_000_000_000n;

export interface GeneratedRank {
  file: string;
  host: string;
  /** Its host's clock minus the first rank's host's: what merge's correction must undo. */
  clockOffsetNs: number;
}

export function generateRanks(dir: string, ranks: number, opsPerRank: number, streams = 8, seed = 4242, withRanks = false): GeneratedRank[] {
  fs.mkdirSync(dir, { recursive: true });
  const template = path.join(dir, 'template.sqlite');
  generate(template, opsPerRank, streams, {
    collectiveEvery: 100,
    seed,
    meta: { host: 'template', origin_ns: JOB_ORIGIN.toString(), started_at: new Date(Number(JOB_ORIGIN / 1_000_000n)).toISOString() },
  });
  let x = seed >>> 0;
  const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const out: GeneratedRank[] = [];
  for (let r = 0; r < ranks; r++) {
    const file = path.join(dir, `rank${String(r).padStart(3, '0')}.sqlite`);
    fs.copyFileSync(template, file);
    const host = `node-${String(r).padStart(3, '0')}`;
    const clockOffsetNs = r === 0 ? 0 : Math.round((rnd() * 2 - 1) * 5_000_000);
    const db = new Database(file);
    try {
      db.transaction(() => {
        const meta = db.prepare('UPDATE meta SET value = ? WHERE key = ?');
        meta.run(host, 'host');
        meta.run((JOB_ORIGIN + BigInt(clockOffsetNs)).toString(), 'origin_ns');
        meta.run(`generated rank ${r} of ${ranks}: ${opsPerRank} operations over ${streams} streams`, 'command');
        db.prepare('UPDATE processes SET host = ?').run(host);
        if (withRanks) {
          // Its rank as torchrun would have set it, one rank per node: every rank's GPU is GPU 0 of its own host.
          db.prepare("UPDATE processes SET rank = ?, local_rank = 0, world_size = ?, rank_variable = 'RANK'").run(r, ranks);
          const env = db.prepare('INSERT INTO process_env (pid, name, value) SELECT pid, ?, ? FROM processes');
          for (const [name, value] of [
            ['RANK', r],
            ['LOCAL_RANK', 0],
            ['WORLD_SIZE', ranks],
          ] as const)
            env.run(name, String(value));
        }
        db.prepare("UPDATE devices SET uuid = ?, name = 'generated GPU'").run(`GPU-generated-${host}-0`);
        // Kernel names in another order on each rank: kernel_k's string now says kernel_(k+r mod 7).
        db.exec("UPDATE strings SET value = 'tmp-' || value WHERE value LIKE 'kernel\\_%' ESCAPE '\\'");
        db.prepare(
          "UPDATE strings SET value = 'kernel_' || ((CAST(substr(value, 12) AS INTEGER) + CAST(? AS INTEGER)) % 7) WHERE value LIKE 'tmp-kernel\\_%' ESCAPE '\\'",
        ).run(r);
      })();
    } finally {
      db.close();
    }
    out.push({ file, host, clockOffsetNs });
  }
  fs.rmSync(template);
  return out;
}

// Run as a script (not when bench/run-bench.ts imports generateRanks()).
if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const { values } = parseArgs({
    options: {
      output: { type: 'string', short: 'o' },
      ranks: { type: 'string', default: '64' },
      ops: { type: 'string', default: '1000000' },
      streams: { type: 'string', default: '8' },
      'with-ranks': { type: 'boolean', default: false },
    },
  });
  const ranks = Number(values.ranks);
  const ops = Number(values.ops);
  const streams = Number(values.streams);
  if (!values.output || !(ranks > 0) || !(ops > 0) || !(streams > 1)) {
    process.stderr.write('usage: node bench/generate-ranks.ts -o DIR [--ranks N] [--ops N] [--streams S>1] [--with-ranks]\n');
    process.exit(2);
  }
  const t = performance.now();
  const files = generateRanks(values.output, ranks, ops, streams, undefined, values['with-ranks']);
  process.stderr.write(
    `generated ${files.length} ranks of ${ops.toLocaleString('en-US')} operations in ${((performance.now() - t) / 1000).toFixed(1)} s → ${values.output}\n`,
  );
}
